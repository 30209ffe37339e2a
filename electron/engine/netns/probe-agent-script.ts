/**
 * The probe agent: a tiny Node program the engine runs with `node -e` in the host netns or, through
 * `nsenter --net=<path>`, inside a sandbox's netns (Node cannot switch namespaces itself). It takes one JSON request
 * per stdin line and answers one JSON line each:
 *   {id, op: 'listeners'}                          → TCP ports in LISTEN state in its netns (/proc/self/net/tcp{,6})
 *   {id, op: 'respond', port, address?, banner}    → listens (port 0 = any) and answers every connection with banner
 *   {id, op: 'connect', host, port, timeoutMs, bannerMs, resetIfBanner?, localPort?} → {outcome: connected(rttMs, banner?) | refused | timeout |
 *     unreachable(errno) | error}
 *   {id, op: 'dns', server, port, name, qtype, timeoutMs, localPort?} → {outcome: answer(transport, rcode, answers, rttMs) |
 *     refused | timeout | unreachable(errno) | error}: one query over UDP, again over TCP when the answer was truncated
 *     or UDP was refused (ICMP port unreachable)
 *   {id, op: 'ping', host, size, timeoutMs} → {outcome: ok | lost | tooBig(mtu) | error}: one ICMP echo of `size`
 *     bytes (the whole IP packet) with DF set (iputils' ping -M do), for the path MTU audit
 * The DNS messages are encoded here by hand (RFC 1035 §4: a 12-byte header, one question, the answer records read
 * back): the agent is a `node -e` string with no module resolution, so no npm library can be loaded, and node:dns
 * cannot be used because it picks its own source port (a traced query must come from the port the trace matches) and
 * does not say whether the answer was truncated or came over TCP.
 *   {id, op: 'reset'}                              → closes every responder (after a probe, before the agent is kept)
 * It exits when stdin closes (the engine died or is done) and after a lifetime counted from its last request.
 * Kept as a string so the bundled CLI, the Electron main and tsx all run the same bytes without a file on disk.
 */
import { ROUTE_ERRORS } from './probe-net';

export const AGENT_LIFETIME_MS = 60_000;

export const AGENT_SCRIPT = String.raw`
'use strict';
const net = require('net');
const fs = require('fs');
const dgram = require('dgram');
const cp = require('child_process');
const servers = [];
const ROUTE_ERRORS = ${JSON.stringify(Object.keys(ROUTE_ERRORS))};
const out = (o) => process.stdout.write(JSON.stringify(o) + '\n');
const quit = () => { for (const s of servers) try { s.close(); } catch {} process.exit(0); };
// a lifetime counted from the last request: an agent kept for the next probe lives on while it is asked things
const life = setTimeout(quit, Number(process.env.PODSCOPE_PROBE_LIFETIME_MS || ${AGENT_LIFETIME_MS}));
life.unref();
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
const QTYPES = { A: 1, NS: 2, CNAME: 5, PTR: 12, AAAA: 28 };
const RCODES = ['NOERROR', 'FORMERR', 'SERVFAIL', 'NXDOMAIN', 'NOTIMP', 'REFUSED'];
function dnsQuery(id, name, qtype) {
  const labels = name === '.' ? [] : name.replace(/\.$/, '').split('.');
  const parts = [Buffer.from([id >> 8, id & 255, 1, 0, 0, 1, 0, 0, 0, 0, 0, 0])];
  for (const l of labels) { const b = Buffer.from(l, 'ascii'); parts.push(Buffer.from([b.length]), b); }
  parts.push(Buffer.from([0, 0, QTYPES[qtype] || 1, 0, 1]));
  return Buffer.concat(parts);
}
function dnsName(m, off) {
  const labels = []; let jumped = false; let next = off; let hops = 0;
  for (;;) {
    if (off >= m.length || hops++ > 64) throw new Error('bad name');
    const len = m[off];
    if ((len & 0xc0) === 0xc0) { if (!jumped) next = off + 2; jumped = true; off = ((len & 0x3f) << 8) | m[off + 1]; continue; }
    if (len === 0) { if (!jumped) next = off + 1; break; }
    labels.push(m.toString('ascii', off + 1, off + 1 + len)); off += 1 + len;
  }
  return { name: labels.join('.') + '.', next };
}
function dnsParse(m, id) {
  if (m.length < 12 || m.readUInt16BE(0) !== id) return undefined;
  const flags = m.readUInt16BE(2);
  const qd = m.readUInt16BE(4); const an = m.readUInt16BE(6);
  let off = 12;
  for (let i = 0; i < qd; i++) off = dnsName(m, off).next + 4;
  const answers = [];
  for (let i = 0; i < an && off < m.length; i++) {
    off = dnsName(m, off).next;
    const type = m.readUInt16BE(off); const len = m.readUInt16BE(off + 8); const at = off + 10;
    const rd = m.subarray(at, at + len);
    if (type === 1 && len === 4) answers.push('A ' + [...rd].join('.'));
    else if (type === 28 && len === 16) answers.push('AAAA ' + Array.from({ length: 8 }, (_, j) => rd.readUInt16BE(j * 2).toString(16)).join(':'));
    else if (type === 5 || type === 2 || type === 12) answers.push((type === 5 ? 'CNAME ' : type === 2 ? 'NS ' : 'PTR ') + dnsName(m, at).name);
    else answers.push('type ' + type);
    off = at + len;
  }
  return { rcode: RCODES[flags & 15] || 'RCODE' + (flags & 15), truncated: (flags & 0x200) !== 0, answers };
}
function dns(req, reply) {
  const started = process.hrtime.bigint();
  const ms = () => Number(process.hrtime.bigint() - started) / 1e6;
  const id = Math.floor(Math.random() * 65536);
  const q = dnsQuery(id, req.name, req.qtype);
  let done = false;
  const finish = (o) => { if (done) return; done = true; reply({ ok: true, outcome: o }); };
  const routeErr = (e) => ROUTE_ERRORS.includes(e.code) ? { kind: 'unreachable', error: e.code } : undefined;
  const overTcp = (why) => {
    const s = net.connect(req.localPort ? { host: req.server, port: req.port, localPort: req.localPort } : { host: req.server, port: req.port });
    let buf = Buffer.alloc(0);
    const t = setTimeout(() => { s.destroy(); finish(why.udpRefused ? { kind: 'refused', tcpTimeout: true } : { kind: 'timeout', truncated: why.truncated }); }, req.timeoutMs);
    s.on('connect', () => { const l = Buffer.alloc(2); l.writeUInt16BE(q.length); s.write(Buffer.concat([l, q])); });
    s.on('data', (b) => {
      buf = Buffer.concat([buf, b]);
      if (buf.length < 2 || buf.length < 2 + buf.readUInt16BE(0)) return;
      clearTimeout(t); s.destroy();
      let a; try { a = dnsParse(buf.subarray(2, 2 + buf.readUInt16BE(0)), id); } catch (e) { a = undefined; }
      finish(a ? Object.assign({ kind: 'answer', transport: 'tcp', rttMs: ms() }, a, { truncated: why.truncated === true, udpRefused: why.udpRefused === true }) : { kind: 'error', error: 'malformed answer over TCP' });
    });
    s.on('error', (e) => {
      clearTimeout(t);
      if (e.code === 'ECONNREFUSED') return finish({ kind: 'refused', udpRefused: why.udpRefused === true });
      finish(routeErr(e) || { kind: 'error', error: e.code || e.message });
    });
  };
  const sock = dgram.createSocket(req.server.includes(':') ? 'udp6' : 'udp4');
  const t = setTimeout(() => { try { sock.close(); } catch {} finish({ kind: 'timeout' }); }, req.timeoutMs);
  const stopUdp = () => { clearTimeout(t); try { sock.close(); } catch {} };
  sock.on('error', (e) => {
    stopUdp();
    // an ICMP port unreachable on the connected socket: nothing listens on UDP there; TCP may still answer
    if (e.code === 'ECONNREFUSED') return overTcp({ udpRefused: true });
    finish(routeErr(e) || { kind: 'error', error: e.code || e.message });
  });
  sock.on('message', (m) => {
    let a; try { a = dnsParse(m, id); } catch { a = undefined; }
    if (!a) return;
    stopUdp();
    if (a.truncated) return overTcp({ truncated: true });
    finish(Object.assign({ kind: 'answer', transport: 'udp', rttMs: ms() }, a));
  });
  sock.bind(req.localPort || 0, () => sock.connect(req.port, req.server, (e) => { if (e) return sock.emit('error', e); sock.send(q); }));
}
function ping(req, reply) {
  const v6 = req.host.includes(':');
  const payload = req.size - (v6 ? 48 : 28);
  // -M do: DF set and no local fragmentation, so a too-big packet is refused with the MTU the kernel knows
  const args = ['-n', '-c', '1', '-M', 'do', '-s', String(payload), '-W', String(req.timeoutMs / 1000), v6 ? '-6' : '-4', req.host];
  cp.execFile('ping', args, { timeout: req.timeoutMs + 2000 }, (err, stdout, stderr) => {
    const text = String(stdout) + String(stderr);
    const mtu = /mtu ?= ?(\d+)/i.exec(text);
    if (mtu) return reply({ ok: true, outcome: { kind: 'tooBig', mtu: Number(mtu[1]), local: /local error|message too long/i.test(text) } });
    if (!err) return reply({ ok: true, outcome: { kind: 'ok' } });
    if (err.code === 'ENOENT') return reply({ ok: true, outcome: { kind: 'error', error: 'ping (iputils-ping) is not installed' } });
    if (err.code === 1) return reply({ ok: true, outcome: { kind: 'lost' } });
    reply({ ok: true, outcome: { kind: 'error', error: text.trim().split('\n').pop() || String(err.code) } });
  });
}
// every responder closed (their ports free again) before the agent is kept for another probe
function reset(reply) {
  const closing = servers.splice(0).map((s) => new Promise((r) => s.close(() => r())));
  Promise.all(closing).then(() => reply({ ok: true }));
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
    life.refresh();
    try {
      if (req.op === 'listeners') reply({ ok: true, ports: listeners() });
      else if (req.op === 'reset') reset(reply);
      else if (req.op === 'respond') respond(req, reply);
      else if (req.op === 'connect') connect(req, reply);
      else if (req.op === 'dns') dns(req, reply);
      else if (req.op === 'ping') ping(req, reply);
      else reply({ ok: false, error: 'unknown op' });
    } catch (e) { reply({ ok: false, error: String(e && e.message || e) }); }
  }
});
out({ id: 0, ok: true, ready: true, pid: process.pid });
`;
