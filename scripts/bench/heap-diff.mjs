// node scripts/bench/heap-diff.mjs BEFORE.heapsnapshot AFTER.heapsnapshot [--top 30] [--retainers NAME]
// What a watcher holds more of at the end of a soak than after its first twelfth: the objects of two
// V8 heap snapshots grouped by constructor (or by type for strings, closures, arrays …), counted and
// sized, sorted by growth. --retainers NAME prints, for a sample of the AFTER snapshot's NAME objects,
// the chain of edges that keeps each alive (its first retainer, up to a GC root).
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: { top: { type: 'string', default: '30' }, retainers: { type: 'string' } },
});
if (positionals.length !== 2) throw new Error('usage: heap-diff.mjs BEFORE.heapsnapshot AFTER.heapsnapshot [--top N] [--retainers NAME]');

function load(path) {
  const snap = JSON.parse(readFileSync(path, 'utf8'));
  const meta = snap.snapshot.meta;
  const nf = meta.node_fields;
  const ef = meta.edge_fields;
  const nodeTypes = meta.node_types[0];
  const edgeTypes = meta.edge_types[0];
  const N = nf.length;
  const E = ef.length;
  const at = (f) => nf.indexOf(f);
  const [iType, iName, iSize, iEdges, iId] = ['type', 'name', 'self_size', 'edge_count', 'id'].map(at);
  const [eType, eName, eTo] = ['type', 'name_or_index', 'to_node'].map((f) => ef.indexOf(f));
  const { nodes, edges, strings } = snap;
  const count = nodes.length / N;
  const label = (i) => {
    const type = nodeTypes[nodes[i * N + iType]];
    const name = strings[nodes[i * N + iName]];
    if (type === 'object' || type === 'native') return `${type}:${name}`;
    if (type === 'closure') return `closure:${name || '(anonymous)'}`;
    return type;
  };
  return { snap, nodes, edges, strings, count, N, E, iSize, iEdges, iId, eType, eName, eTo, nodeTypes, edgeTypes, label };
}

function groups(h) {
  const by = new Map();
  for (let i = 0; i < h.count; i++) {
    const k = h.label(i);
    const g = by.get(k) ?? { count: 0, size: 0 };
    g.count++;
    g.size += h.nodes[i * h.N + h.iSize];
    by.set(k, g);
  }
  return by;
}

const before = load(positionals[0]);
const after = load(positionals[1]);
const a = groups(before);
const b = groups(after);
const rows = [];
for (const k of new Set([...a.keys(), ...b.keys()])) {
  const x = a.get(k) ?? { count: 0, size: 0 };
  const y = b.get(k) ?? { count: 0, size: 0 };
  rows.push({ k, c0: x.count, c1: y.count, dc: y.count - x.count, ds: y.size - x.size });
}
rows.sort((p, q) => q.ds - p.ds || q.dc - p.dc);
const total = (g) => [...g.values()].reduce((s, v) => s + v.size, 0);
console.log(
  `heap: ${(total(a) / 1024).toFixed(0)} KiB (${before.count} objects) → ${(total(b) / 1024).toFixed(0)} KiB (${after.count} objects)`,
);
console.log(`${'group'.padEnd(50)} ${'before'.padStart(8)} ${'after'.padStart(8)} ${'Δcount'.padStart(8)} ${'Δbytes'.padStart(10)}`);
for (const r of rows.slice(0, Number(values.top)))
  console.log(
    `${r.k.slice(0, 50).padEnd(50)} ${String(r.c0).padStart(8)} ${String(r.c1).padStart(8)} ${String(r.dc).padStart(8)} ${String(r.ds).padStart(10)}`,
  );

if (values.retainers) {
  const h = after;
  // First retainer of every node (any edge but weak ones), from the edges' layout.
  const firstEdge = new Uint32Array(h.count + 1);
  for (let i = 0, e = 0; i < h.count; i++) {
    firstEdge[i] = e;
    e += h.nodes[i * h.N + h.iEdges] * h.E;
  }
  firstEdge[h.count] = h.edges.length;
  const retainer = new Int32Array(h.count).fill(-1);
  const via = new Int32Array(h.count).fill(-1);
  for (let i = 0; i < h.count; i++) {
    for (let e = firstEdge[i]; e < firstEdge[i + 1]; e += h.E) {
      const type = h.edgeTypes[h.edges[e + h.eType]];
      if (type === 'weak' || type === 'shortcut') continue;
      const to = h.edges[e + h.eTo] / h.N;
      if (retainer[to] === -1) {
        retainer[to] = i;
        via[to] = e;
      }
    }
  }
  const edgeName = (e) => {
    const type = h.edgeTypes[h.edges[e + h.eType]];
    const n = h.edges[e + h.eName];
    return type === 'element' || type === 'hidden' ? `[${n}]` : String(h.strings[n]);
  };
  const wanted = [];
  for (let i = 0; i < h.count && wanted.length < 5; i++)
    if (h.label(i) === values.retainers || h.label(i).endsWith(`:${values.retainers}`)) wanted.push(i);
  for (const start of wanted) {
    const chain = [];
    for (let i = start, hops = 0; i !== -1 && hops < 25; i = retainer[i], hops++)
      chain.push(`${h.label(i)}${via[i] !== -1 ? ` ←${edgeName(via[i])}─` : ''}`);
    console.log(`\n${chain.join(' ')}`);
  }
}
