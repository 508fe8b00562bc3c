-- schema.sql: the Hierarchical Transition Graph (HTG), HTAM's memory, as
-- SQLite tables. Applied with seed.sql, in one transaction, to an empty
-- database on first use (lib/htg.c embeds both files). docs/memory.md
-- explains the model; this file is the reference for its columns.
--
-- Two levels: directions (global, coarse) hold strategies (local,
-- actionable). Edges join directions pairwise (src -> dst, never paths).
-- The transitions log is the experience; strategies' and edges' runtime
-- columns and the evidence table are folds over it, kept up to date by
-- htg-update (and htg-memory import) in the transaction that adds the
-- transition, so they never disagree with the log.

-- Bumped whenever a table or column changes meaning; the tools refuse a
-- memory of another version.
PRAGMA user_version = 1;

CREATE TABLE meta (
	key TEXT PRIMARY KEY,
	value TEXT NOT NULL
);

-- The template families of the rules generator (docs/tasks.md).
CREATE TABLE families (
	id TEXT PRIMARY KEY
);

-- Global directions: what kind of change to make next.
CREATE TABLE directions (
	id TEXT PRIMARY KEY,
	name TEXT NOT NULL,
	ord INTEGER NOT NULL UNIQUE,          -- display order
	text TEXT NOT NULL                    -- what the direction is about
);

-- Local strategies: one actionable change under a direction. moves is a
-- JSON array of alternative knob moves for the template generator, each
-- {"family": F or "*", "set": {...}, "mul": {...}, "add": {...}}
-- (docs/memory.md). The runtime columns fold the transitions that applied
-- the strategy: n of them, n_ok measured correct, wins (gain > 1.01),
-- fails (not ok), sum_log_gain over the ok ones.
CREATE TABLE strategies (
	id TEXT PRIMARY KEY,
	direction TEXT NOT NULL REFERENCES directions(id),
	text TEXT NOT NULL,
	moves TEXT NOT NULL CHECK (json_valid(moves) AND json_type(moves) = 'array'),
	risk TEXT NOT NULL,
	n INTEGER NOT NULL DEFAULT 0,
	n_ok INTEGER NOT NULL DEFAULT 0,
	wins INTEGER NOT NULL DEFAULT 0,
	fails INTEGER NOT NULL DEFAULT 0,
	sum_log_gain REAL NOT NULL DEFAULT 0,
	updated TEXT
);
CREATE INDEX strategies_direction ON strategies(direction);

-- Which families a strategy applies to, with a static prior in [0, 1]:
-- how promising it is for that family before anything was measured. A
-- strategy without a row for a family does not apply to it.
CREATE TABLE fits (
	strategy TEXT NOT NULL REFERENCES strategies(id),
	family TEXT NOT NULL REFERENCES families(id),
	prior REAL NOT NULL CHECK (prior >= 0 AND prior <= 1),
	PRIMARY KEY (strategy, family)
) WITHOUT ROWID;

-- Direction-to-direction transitions: src is the direction applied last
-- ('start' before the first step), dst the next. Static prior in [0, 1]
-- with when it helps, why and the risk; runtime columns as in strategies,
-- folded over the transitions whose previous direction was src.
CREATE TABLE edges (
	src TEXT NOT NULL,
	dst TEXT NOT NULL REFERENCES directions(id),
	prior REAL NOT NULL CHECK (prior >= 0 AND prior <= 1),
	helps TEXT NOT NULL,
	why TEXT NOT NULL,
	risk TEXT NOT NULL,
	n INTEGER NOT NULL DEFAULT 0,
	n_ok INTEGER NOT NULL DEFAULT 0,
	wins INTEGER NOT NULL DEFAULT 0,
	fails INTEGER NOT NULL DEFAULT 0,
	sum_log_gain REAL NOT NULL DEFAULT 0,
	updated TEXT,
	PRIMARY KEY (src, dst)
) WITHOUT ROWID;

-- The experience: one row per measured candidate. The state before the
-- step (family, bound, floor fraction and its bucket, last outcome, the
-- last three directions p1 (most recent) .. p3 and strategies s1 .. s3,
-- 'start' where the history is shorter), what was applied, what came of
-- it. gain = baseline_us / time_us for ok candidates (baseline: the best
-- time before the step, else the reference's time), NULL otherwise;
-- utility is the signed value selection attends to (docs/memory.md).
-- (run, task, candidate) is unique, so replaying a step changes nothing.
CREATE TABLE transitions (
	id INTEGER PRIMARY KEY,
	candidate TEXT NOT NULL,
	run TEXT NOT NULL,
	task TEXT NOT NULL,
	family TEXT NOT NULL,
	step INTEGER NOT NULL,
	bound TEXT NOT NULL,
	floor_fraction REAL NOT NULL,
	ffb INTEGER NOT NULL,
	last_outcome TEXT NOT NULL,
	p1 TEXT NOT NULL,
	p2 TEXT NOT NULL,
	p3 TEXT NOT NULL,
	s1 TEXT NOT NULL,
	s2 TEXT NOT NULL,
	s3 TEXT NOT NULL,
	direction TEXT NOT NULL REFERENCES directions(id),
	strategy TEXT,
	generator TEXT,
	outcome TEXT NOT NULL,
	baseline_us REAL,
	time_us REAL,
	gain REAL,
	utility REAL NOT NULL,
	reason TEXT,
	created TEXT NOT NULL,
	UNIQUE (run, task, candidate)
);
CREATE INDEX transitions_direction ON transitions(direction, family);
CREATE INDEX transitions_strategy ON transitions(strategy);

-- Attention's sufficient statistics: the transitions folded by the state
-- features selection compares, once per prefix position. pos 0 counts
-- every transition (tok ''), pos 1..3 the direction at that prefix
-- position (tok = p1..p3), pos 4..6 the strategy (s1..s3). Selection then
-- reads a few hundred rows instead of the whole log (docs/memory.md).
CREATE TABLE evidence (
	pos INTEGER NOT NULL,
	tok TEXT NOT NULL,
	family TEXT NOT NULL,
	bound TEXT NOT NULL,
	ffb INTEGER NOT NULL,
	last_outcome TEXT NOT NULL,
	direction TEXT NOT NULL,
	strategy TEXT NOT NULL,               -- '' when none was recorded
	n INTEGER NOT NULL,
	sum_utility REAL NOT NULL,
	PRIMARY KEY (pos, tok, family, bound, ffb, last_outcome, direction, strategy)
) WITHOUT ROWID;
