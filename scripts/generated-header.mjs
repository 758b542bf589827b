// Prepends the "generated, do not edit" header to openapi-typescript's output.
// Idempotent: a file that already starts with the header is left alone.
// Usage: node scripts/generated-header.mjs [file]   (default: sdk/generated/openapi.ts)
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

export const HEADER =
  '// Generated from openapi.yaml by openapi-typescript. Do not edit by hand: run `npm run generate`.\n';

export function withHeader(source) {
  return source.startsWith(HEADER) ? source : HEADER + source;
}

const defaultFile = fileURLToPath(new URL('../sdk/generated/openapi.ts', import.meta.url));
const file = process.argv[2] ?? defaultFile;
const source = readFileSync(file, 'utf8');
const result = withHeader(source);
if (result !== source) writeFileSync(file, result);
