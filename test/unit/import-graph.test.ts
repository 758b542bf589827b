// The import graph of the sources (cli/, sdk/, relay/ with the dashboard): no module reaches itself
// through its imports (type-only and lazy imports count: a circle is a circle for a reader), and
// the seams ARCHITECTURE.md describes hold: the mail vocabulary is a leaf, storage calls nothing
// above it, the domain imports no transport.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const SOURCES = ['cli', 'sdk', 'relay'];
const SKIP = new Set(['node_modules', 'dist']);

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const full = path.join(dir, e.name);
    if (e.isDirectory()) return SKIP.has(e.name) ? [] : sourceFiles(full);
    return /\.tsx?$/.test(e.name) && !e.name.endsWith('.d.ts') ? [full] : [];
  });
}

const rel = (file: string) => path.relative(ROOT, file).split(path.sep).join('/');

/** Relative specifiers of every import, export-from and import() in the source. */
export function importSpecifiers(source: string): string[] {
  const code = source.replace(/\/\*[\s\S]*?\*\//g, '').replace(/(^|[^:'"`\\])\/\/.*$/gm, '$1');
  const specifiers: string[] = [];
  for (const pattern of [/\b(?:import|export)\s[^;'"]*?\bfrom\s*['"](\.[^'"]+)['"]/g, /\bimport\s*['"](\.[^'"]+)['"]/g, /\bimport\(\s*['"](\.[^'"]+)['"]\s*\)/g]) {
    for (const match of code.matchAll(pattern)) specifiers.push(match[1]!);
  }
  return specifiers;
}

function resolveImport(from: string, specifier: string): string | undefined {
  const target = path.resolve(path.dirname(from), specifier);
  const stem = target.replace(/\.js$/, '');
  return [`${stem}.ts`, `${stem}.tsx`, path.join(target, 'index.ts'), path.join(target, 'index.tsx')].find((f) => existsSync(f));
}

function importGraph(): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const file of SOURCES.flatMap((dir) => sourceFiles(path.join(ROOT, dir)))) {
    const targets = importSpecifiers(readFileSync(file, 'utf8')).flatMap((s) => resolveImport(file, s) ?? []);
    graph.set(rel(file), [...new Set(targets.map(rel))]);
  }
  return graph;
}

/** The strongly connected components with more than one module, or a module importing itself (Tarjan). */
export function circles(graph: Map<string, string[]>): string[][] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (node: string) => {
    index.set(node, next);
    low.set(node, next++);
    stack.push(node);
    onStack.add(node);
    for (const to of graph.get(node) ?? []) {
      if (!index.has(to)) {
        visit(to);
        low.set(node, Math.min(low.get(node)!, low.get(to)!));
      } else if (onStack.has(to)) low.set(node, Math.min(low.get(node)!, index.get(to)!));
    }
    if (low.get(node) !== index.get(node)) return;
    const component: string[] = [];
    let member: string;
    do {
      member = stack.pop()!;
      onStack.delete(member);
      component.push(member);
    } while (member !== node);
    if (component.length > 1 || graph.get(node)?.includes(node)) found.push(component.sort());
  };
  for (const node of graph.keys()) if (!index.has(node)) visit(node);
  return found;
}

const graph = importGraph();

/** Imports from modules under `from` into modules under any of `forbidden`. */
function crossings(from: string, forbidden: string[]): string[] {
  return [...graph].flatMap(([file, targets]) =>
    file.startsWith(from) ? targets.filter((t) => forbidden.some((f) => t.startsWith(f))).map((t) => `${file} -> ${t}`) : [],
  );
}

test('no import circles in cli/, sdk/ and relay/', () => {
  assert.ok(graph.size > 100, 'the graph holds the sources');
  assert.deepEqual(circles(graph), [], 'each list is a circle of modules importing each other');
});

test('relay/mail/ (the mail vocabulary) imports nothing else of the relay', () => {
  const outside = [...graph].flatMap(([file, targets]) =>
    file.startsWith('relay/mail/') ? targets.filter((t) => !t.startsWith('relay/mail/')).map((t) => `${file} -> ${t}`) : [],
  );
  assert.deepEqual(outside, []);
});

test('relay/storage/ calls nothing above it, and relay/domain/ imports no transport', () => {
  const above = ['domain', 'delivery', 'queue', 'http', 'smtp', 'submission', 'webhooks', 'inbox', 'dashboard'].map((d) => `relay/${d}/`);
  assert.deepEqual(crossings('relay/storage/', above), []);
  assert.deepEqual(crossings('relay/domain/', ['relay/http/', 'relay/smtp/', 'relay/submission/', 'relay/delivery/']), []);
});

test('the circle finder finds a circle through a type-only and a lazy import, and none in a tree', () => {
  assert.deepEqual(importSpecifiers("import type { A } from './a.js';\nconst b = () => import('./b.js');\n// import { c } from './c.js'"), ['./a.js', './b.js']);
  const g = (edges: Record<string, string[]>) => new Map(Object.entries(edges));
  assert.deepEqual(circles(g({ a: ['b'], b: ['c'], c: ['a'], d: ['a'] })), [['a', 'b', 'c']]);
  assert.deepEqual(circles(g({ a: ['b', 'c'], b: ['c'], c: [] })), []);
  assert.deepEqual(circles(g({ a: ['a'] })), [['a']]);
});
