// Runs after `tsc -p tsconfig.build.json`: bundles the CLI's start-up path (main, the program,
// errors, output, and commander) into one file, dist/cli/main.js, in place of tsc's entry, with
// each command in a chunk loaded when it runs. Start-up then reads one file instead of
// resolving and compiling some twenty modules, which is most of what `ravenctl --version` costs
// over `node -e 0`. The SDK and undici, which every command that calls the API loads, are in the
// chunks too: undici's hundred-odd files cost a `ravenctl send` 0.34 CPU s, one chunk 0.29. The
// packages a command loads only when it runs (the prompts, the MCP SDK, ws) stay external, and so
// does the relay (`relay start` imports dist/relay/app.js): its migrations are found next to its
// compiled code, and it loads its own undici, for webhooks, from node_modules. Bundles into the
// build folder given as the argument (scripts/build.mjs passes its fresh one; the tests' copy of
// the sources, test/helpers/child-build.ts, its own), else dist/.
import { existsSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const root = fileURLToPath(new URL('..', import.meta.url));
const pkg = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8'));
const bundled = new Set(['commander', 'raven-email-sdk', 'undici']);
const external = Object.keys(pkg.dependencies).filter((name) => !bundled.has(name)).flatMap((name) => [name, `${name}/*`]);
const dist = process.argv[2] ? path.resolve(process.argv[2]) : path.join(root, 'dist');
const outdir = path.join(dist, 'cli');

/** Imports of relay/ sources point at their compiled files in dist/relay/, relative to the bundle. */
const relayStaysCompiled = {
  name: 'relay-stays-compiled',
  setup(b) {
    b.onResolve({ filter: /\/relay\// }, (args) => {
      const source = path.resolve(args.resolveDir, args.path);
      const fromRoot = path.relative(root, source);
      if (!fromRoot.startsWith(`relay${path.sep}`)) return undefined;
      const compiled = path.join(dist, fromRoot);
      return { path: `./${path.relative(outdir, compiled).split(path.sep).join('/')}`, external: true };
    });
  },
};

// Chunks of an earlier build (their names carry a content hash) would pile up.
if (existsSync(outdir)) for (const name of readdirSync(outdir)) if (/-[A-Z0-9]{8}\.js$/.test(name)) rmSync(path.join(outdir, name));

await build({
  entryPoints: [path.join(root, 'cli/main.ts')],
  outdir,
  // Each lazily loaded command is a chunk of its own, so its imports (the SDK, the prompts) are
  // only loaded when it runs. Chunks sit beside the entry: the relay paths above are relative to it.
  splitting: true,
  chunkNames: '[name]-[hash]',
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  external,
  plugins: [relayStaysCompiled],
  // commander is CommonJS: its require() of node built-ins needs a require in an ES module.
  banner: { js: "import { createRequire as __ravenRequire } from 'node:module'; const require = __ravenRequire(import.meta.url);" },
  logLevel: 'warning',
});
