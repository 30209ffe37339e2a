/**
 * The probe agent: a tiny Node program the engine runs with `node -e` in the host netns or, through
 * `nsenter --net=<path>`, inside a sandbox's netns (Node cannot switch namespaces itself). It takes one JSON request
 * per stdin line and answers one JSON line each:
 *   {id, op: 'listeners'}                          → TCP ports in LISTEN state in its netns (/proc/self/net/tcp{,6})
 *   {id, op: 'respond', port, address?, banner}    → listens (port 0 = any) and answers every connection with banner
 *   {id, op: 'connect', host, port, timeoutMs, bannerMs, resetIfBanner?, localPort?} → {outcome: connected(rttMs, banner?) | refused | timeout |
 *     unreachable(errno) | error}
 * It exits when stdin closes (the engine died or is done) and after a hard lifetime, so no responder outlives a probe.
 * Kept as a string so the bundled CLI, the Electron main and tsx all run the same bytes without a file on disk.
 */
import { ROUTE_ERRORS } from './probe-net';

export const AGENT_LIFETIME_MS = 60_000;

export const AGENT_SCRIPT = String.raw`
'use strict';
const net = require('net');
const fs = require('fs');
const servers = [];
const ROUTE_ERRORS = ${JSON.stringify(Object.keys(ROUTE_ERRORS))};
const out = (o) => process.stdout.write(JSON.stringify(o) + '\n');
const quit = () => { for (const s of servers) try { s.close(); } catch {} process.exit(0); };
setTimeout(quit, Number(process.env.PODSCOPE_PROBE_LIFETIME_MS || ${AGENT_LIFETIME_MS})).unref();
process.stdin.on('end', quit);
process.stdin.on('error', quit);
function listeners() {
  const ports = new Set();
  for (const f of ['/proc/self/net/tcp', '/proc/self/net/tcp6']) {
    let text = '';
    try { text = fs.readFileSync(f, 'utf8'); } catch { continue; }
    for (const line of text.split('\n').slice(1)) {
      const cols = line.trim().split(/\s+/);
      if (cols.length > 3 && cols[3] === '0A') ports.add(parseInt(cols[1].split(':')[1], 16));
    }
  }
  return [...ports];
}
function respond(req, reply, deadline) {
  deadline = deadline || Date.now() + 3000;
  const srv = net.createServer((s) => { s.on('error', () => {}); s.end(req.banner); });
  const onErr = (e) => {
    // an IPv6 address is unusable while duplicate address detection runs (a bridge just created): wait for it
    if (req.address && e.code === 'EADDRNOTAVAIL' && Date.now() < deadline) return setTimeout(() => respond(req, reply, deadline), 100);
    reply({ ok: false, error: e.code || e.message });
  };
  srv.once('error', (e) => {
    // a netns without IPv6 cannot bind '::'; fall back to every IPv4 address
    if (!req.address && (e.code === 'EAFNOSUPPORT' || e.code === 'EADDRNOTAVAIL')) {
      srv.once('error', onErr);
      srv.listen({ port: req.port, host: '0.0.0.0' }, () => reply({ ok: true, port: srv.address().port }));
    } else onErr(e);
  });
  srv.listen({ port: req.port, host: req.address || '::', ipv6Only: false }, () => { servers.push(srv); reply({ ok: true, port: srv.address().port }); });
}
function connect(req, reply) {
  const started = process.hrtime.bigint();
  let rttMs; let banner = ''; let done = false;
  // a source port chosen by the engine (a traced connect): the TRACE rules match exactly this flow
  const s = net.connect(req.localPort ? { host: req.host, port: req.port, localPort: req.localPort } : { host: req.host, port: req.port });
  // answered by one of the probe's own responders: a RST leaves no TIME-WAIT behind in either namespace (FINs crossing
  // would leave one in each for a minute); anything else gets a normal close
  const ours = () => typeof req.resetIfBanner === 'string' && req.resetIfBanner !== '' && banner.startsWith(req.resetIfBanner);
  const close = () => { if (ours()) { try { s.resetAndDestroy(); return; } catch {} } s.destroy(); };
  const finish = (o) => { if (done) return; done = true; clearTimeout(t1); clearTimeout(t2); close(); reply({ ok: true, outcome: o }); };
  const t1 = setTimeout(() => finish({ kind: 'timeout' }), req.timeoutMs);
  let t2;
  s.on('connect', () => {
    rttMs = Number(process.hrtime.bigint() - started) / 1e6;
    clearTimeout(t1);
    t2 = setTimeout(() => finish({ kind: 'connected', rttMs }), req.bannerMs);
  });
  s.on('data', (b) => {
    banner += b.toString('utf8');
    const nl = banner.indexOf('\n');
    if (nl >= 0 || banner.length > 512) finish({ kind: 'connected', rttMs, banner: banner.slice(0, nl >= 0 ? nl : 512) });
  });
  s.on('end', () => finish(rttMs === undefined ? { kind: 'error', error: 'closed' } : { kind: 'connected', rttMs, banner: banner || undefined }));
  s.on('error', (e) => {
    if (rttMs !== undefined) return finish({ kind: 'connected', rttMs, banner: banner || undefined });
    if (e.code === 'ECONNREFUSED') return finish({ kind: 'refused' });
    // failed before any answer with a routing error: the route decision stopped it, no packet left
    if (ROUTE_ERRORS.includes(e.code)) return finish({ kind: 'unreachable', error: e.code });
    finish({ kind: 'error', error: e.code || e.message });
  });
}
let buf = '';
process.stdin.on('data', (chunk) => {
  buf += chunk.toString('utf8');
  let nl;
  while ((nl = buf.indexOf('\n')) >= 0) {
    const line = buf.slice(0, nl); buf = buf.slice(nl + 1);
    let req;
    try { req = JSON.parse(line); } catch { continue; }
    const reply = (o) => out(Object.assign({ id: req.id }, o));
    try {
      if (req.op === 'listeners') reply({ ok: true, ports: listeners() });
      else if (req.op === 'respond') respond(req, reply);
      else if (req.op === 'connect') connect(req, reply);
      else reply({ ok: false, error: 'unknown op' });
    } catch (e) { reply({ ok: false, error: String(e && e.message || e) }); }
  }
});
out({ id: 0, ok: true, ready: true, pid: process.pid });
`;
