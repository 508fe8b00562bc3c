/* htg_sql.S: memory/schema.sql and memory/seed.sql embedded in the
 * library (NUL-terminated), so the memory tools create a new memory
 * without any file at run time. Paths are relative to the repository root,
 * where make runs the assembler. */
	.section .rodata
	.global htg_schema_sql
	.type htg_schema_sql, @object
htg_schema_sql:
	.incbin "memory/schema.sql"
	.byte 0
	.size htg_schema_sql, . - htg_schema_sql

	.global htg_seed_sql
	.type htg_seed_sql, @object
htg_seed_sql:
	.incbin "memory/seed.sql"
	.byte 0
	.size htg_seed_sql, . - htg_seed_sql

	.section .note.GNU-stack, "", @progbits
