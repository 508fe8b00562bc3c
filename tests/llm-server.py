#!/usr/bin/env python3
"""llm-server.py: a chat-completions server on loopback for kgen's tests.

It speaks the OpenAI protocol (POST /v1/chat/completions) and answers the
n-th request as the n-th STEP of its script says (the last step repeats):

  answer:NAME          200, the message content is ANSWERS/NAME.md
  cut:NAME             the same, with finish_reason "length"
  status:CODE          that HTTP status, with an OpenAI-style error body
  body:broken          200 with a body that is not JSON
  body:empty-choices   200 with "choices": []
  body:no-content      200 with a choice whose content is null
  echo-key             401 whose message quotes the Authorization header
                       (as some hosted APIs do), to test that kgen scrubs it;
                       code=N sends status N instead; escaped=1 writes every
                       character of it as a JSON escape (\\u0073...), and
                       escaped=cut does that in a body cut short (not JSON)
  echo-key-answer      200 with answers/good.md whose CUDA block quotes the
                       Authorization header, every character JSON-escaped
  hang                 reads the request and never answers

A step may carry options after ';': delay=S (seconds before answering),
retry-after=V (a Retry-After header). Example: status:429;retry-after=1

It binds 127.0.0.1 on a free port, writes the port to --port-file once it
listens, logs every request as a JSON line to --log (its number, start and
end times, the Authorization header, the request body and the step), and
exits by itself after --lifetime seconds whatever happens.

Python 3 standard library only."""

import argparse
import json
import os
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


def escaped(text):
    """Every character as a JSON escape: 'sk' -> '\\u0073\\u006b'."""
    return ''.join('\\u%04x' % ord(c) for c in text)


def parse_step(text):
    """'status:429;retry-after=1' -> ('status', '429', {'retry-after': '1'})"""
    head, *opts = text.split(';')
    kind, _, arg = head.partition(':')
    options = dict(o.split('=', 1) for o in opts if '=' in o)
    return kind, arg, options


class Script:
    """The steps, handed out one per request, thread-safe."""

    def __init__(self, steps):
        self.steps = steps
        self.n = 0
        self.lock = threading.Lock()

    def next(self):
        with self.lock:
            n = self.n
            self.n += 1
        return n, self.steps[min(n, len(self.steps) - 1)]


class Handler(BaseHTTPRequestHandler):
    protocol_version = 'HTTP/1.1'

    def log_message(self, fmt, *args):
        pass  # the JSON log says what happened

    def send(self, code, body, headers=()):
        data = body if isinstance(body, bytes) else json.dumps(body).encode()
        self.send_response(code)
        self.send_header('Content-Type', 'application/json')
        self.send_header('Content-Length', str(len(data)))
        for name, value in headers:
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)

    def completion(self, request, content, finish):
        prompt = ''.join(m.get('content') or '' for m in request.get('messages', []))
        return {
            'id': 'chatcmpl-test', 'object': 'chat.completion',
            'created': int(time.time()), 'model': request.get('model'),
            'choices': [{'index': 0, 'finish_reason': finish,
                         'message': {'role': 'assistant', 'content': content}}],
            'usage': {'prompt_tokens': len(prompt) // 4,
                      'completion_tokens': len(content) // 4,
                      'total_tokens': len(prompt) // 4 + len(content) // 4},
        }

    def do_POST(self):
        cfg = self.server.cfg
        start = time.time()
        length = int(self.headers.get('Content-Length') or 0)
        raw = self.rfile.read(length)
        n, step = cfg.script.next()
        kind, arg, opts = parse_step(step)
        try:
            request = json.loads(raw)
        except ValueError:
            request = None
        entry = {'n': n, 'step': step, 'path': self.path, 'start': start,
                 'auth': self.headers.get('Authorization'), 'request': request}
        if 'delay' in opts:
            time.sleep(float(opts['delay']))
        headers = [('Retry-After', opts['retry-after'])] if 'retry-after' in opts else []

        if self.path != cfg.path:
            self.send(404, {'error': {'message': 'no such path: ' + self.path}})
        elif request is None:
            self.send(400, {'error': {'message': 'the body is not JSON'}})
        elif kind in ('answer', 'cut'):
            with open(os.path.join(cfg.answers, arg + '.md'), encoding='utf-8') as f:
                content = f.read()
            self.send(200, self.completion(request, content,
                                           'length' if kind == 'cut' else 'stop'), headers)
        elif kind == 'status':
            self.send(int(arg), {'error': {'message': 'scripted status ' + arg,
                                           'type': 'test'}}, headers)
        elif kind == 'body' and arg == 'broken':
            self.send(200, b'{"choices": [{"message": {"content": "```cuda', headers)
        elif kind == 'body' and arg == 'empty-choices':
            self.send(200, {'id': 'x', 'object': 'chat.completion', 'choices': []}, headers)
        elif kind == 'body' and arg == 'no-content':
            self.send(200, {'choices': [{'index': 0, 'finish_reason': 'content_filter',
                                         'message': {'role': 'assistant', 'content': None}}]})
        elif kind == 'echo-key' and 'escaped' in opts:
            body = ('{"error": {"message": "Incorrect API key provided: %s"}}'
                    % escaped(str(self.headers.get('Authorization')))).encode()
            self.send(int(opts.get('code', 401)),
                      body[:-3] if opts['escaped'] == 'cut' else body)
        elif kind == 'echo-key':
            self.send(int(opts.get('code', 401)),
                      {'error': {'message': 'Incorrect API key provided: ' +
                                 str(self.headers.get('Authorization'))}})
        elif kind == 'echo-key-answer':
            # answers/good.md with a line quoting the key in its CUDA block
            with open(os.path.join(cfg.answers, 'good.md'), encoding='utf-8') as f:
                good = json.dumps(f.read())[1:-1]
            content = good.replace('```cuda\\n', '```cuda\\n// your key: %s\\n'
                                   % escaped(str(self.headers.get('Authorization'))), 1)
            self.send(200, ('{"choices": [{"index": 0, "finish_reason": "stop", '
                            '"message": {"role": "assistant", "content": "%s"}}]}'
                            % content).encode())
        elif kind == 'hang':
            cfg.log(entry)
            time.sleep(cfg.lifetime)
            return
        else:
            self.send(500, {'error': {'message': 'bad script step: ' + step}})
        entry['end'] = time.time()
        cfg.log(entry)


class Config:
    def __init__(self, args):
        self.script = Script(args.steps)
        self.answers = args.answers
        self.path = args.path
        self.lifetime = args.lifetime
        self.log_file = open(args.log, 'a', encoding='utf-8') if args.log else None
        self.lock = threading.Lock()

    def log(self, entry):
        if self.log_file:
            with self.lock:
                self.log_file.write(json.dumps(entry) + '\n')
                self.log_file.flush()


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    p = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    p.add_argument('--port-file', required=True)
    p.add_argument('--log')
    p.add_argument('--lifetime', type=float, default=60)
    p.add_argument('--answers', default=os.path.join(here, 'data', 'kgen', 'answers'))
    p.add_argument('--path', default='/v1/chat/completions')
    p.add_argument('steps', nargs='+', metavar='STEP')
    args = p.parse_args()

    server = ThreadingHTTPServer(('127.0.0.1', 0), Handler)
    server.daemon_threads = True
    server.cfg = Config(args)
    # Stop after the lifetime whatever happens, even with a request hanging.
    timer = threading.Timer(args.lifetime, lambda: os._exit(0))
    timer.daemon = True
    timer.start()
    tmp = args.port_file + '.tmp'
    with open(tmp, 'w') as f:
        f.write('%d\n' % server.server_address[1])
    os.rename(tmp, args.port_file)
    server.serve_forever()


if __name__ == '__main__':
    main()
