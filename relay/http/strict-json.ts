// A strict JSON parser for request bodies. JSON.parse silently keeps the last of repeated keys and
// accepts lone surrogates; the contract refuses both, and nesting deep enough to hurt. Objects are
// created without a prototype so a "__proto__" key is plain data.
export class JsonSyntaxError extends Error {
  override name = 'JsonSyntaxError';
}

const MAX_DEPTH = 64;

export function parseStrictJson(text: string): unknown {
  const parser = new StrictParser(text);
  const value = parser.value(0);
  parser.skipWhitespace();
  if (parser.i !== text.length) parser.fail('unexpected data after the JSON value');
  return value;
}

// A class rather than closures inside parseStrictJson: every request body is parsed, and a set of
// closures (each named at creation under tsx) per call cost more than the parse of a small body.
class StrictParser {
  i = 0;
  constructor(private readonly text: string) {}

  fail(what: string): never {
    throw new JsonSyntaxError(`${what} at position ${this.i}`);
  }

  skipWhitespace(): void {
    const text = this.text;
    for (;;) {
      const c = text.charCodeAt(this.i);
      if (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09) this.i++;
      else return;
    }
  }

  private readUnit(): number {
    const hex = this.text.slice(this.i, this.i + 4);
    if (!/^[0-9a-fA-F]{4}$/.test(hex)) this.fail('bad unicode escape');
    this.i += 4;
    return parseInt(hex, 16);
  }

  private string(): string {
    const text = this.text;
    // i is at the opening quote
    let i = this.i + 1;
    let out = '';
    let start = i;
    for (;;) {
      const c = text.charCodeAt(i);
      if (Number.isNaN(c)) {
        this.i = i;
        this.fail('unterminated string');
      }
      if (c === 0x22) {
        out += text.slice(start, i);
        i++;
        break;
      }
      if (c < 0x20) {
        this.i = i;
        this.fail('control character in string');
      }
      if (c >= 0xd800 && c <= 0xdfff) {
        const next = text.charCodeAt(i + 1);
        if (c <= 0xdbff && next >= 0xdc00 && next <= 0xdfff) {
          i += 2;
          continue;
        }
        this.i = i;
        this.fail('lone surrogate in string');
      }
      if (c === 0x5c) {
        out += text.slice(start, i);
        const e = text[i + 1];
        i += 2;
        switch (e) {
          case '"': out += '"'; break;
          case '\\': out += '\\'; break;
          case '/': out += '/'; break;
          case 'b': out += '\b'; break;
          case 'f': out += '\f'; break;
          case 'n': out += '\n'; break;
          case 'r': out += '\r'; break;
          case 't': out += '\t'; break;
          case 'u': {
            this.i = i;
            const unit = this.readUnit();
            if (unit >= 0xd800 && unit <= 0xdbff) {
              if (text[this.i] !== '\\' || text[this.i + 1] !== 'u') this.fail('lone surrogate escape');
              this.i += 2;
              const low = this.readUnit();
              if (low < 0xdc00 || low > 0xdfff) this.fail('lone surrogate escape');
              out += String.fromCharCode(unit, low);
            } else if (unit >= 0xdc00 && unit <= 0xdfff) {
              this.fail('lone surrogate escape');
            } else {
              out += String.fromCharCode(unit);
            }
            i = this.i;
            break;
          }
          default:
            this.i = i;
            this.fail('bad escape');
        }
        start = i;
        continue;
      }
      i++;
    }
    this.i = i;
    return out;
  }

  private number(): number {
    const match = /^-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/.exec(this.text.slice(this.i, this.i + 400));
    if (!match) return this.fail('bad number');
    this.i += match[0].length;
    return Number(match[0]);
  }

  value(depth: number): unknown {
    if (depth > MAX_DEPTH) this.fail('nesting too deep');
    this.skipWhitespace();
    const text = this.text;
    const c = text[this.i];
    if (c === '{') {
      this.i++;
      const obj: Record<string, unknown> = Object.create(null);
      const seen = new Set<string>();
      this.skipWhitespace();
      if (text[this.i] === '}') {
        this.i++;
        return obj;
      }
      for (;;) {
        this.skipWhitespace();
        if (text[this.i] !== '"') this.fail('expected a key');
        const key = this.string();
        if (seen.has(key)) this.fail(`repeated key "${key.slice(0, 40)}"`);
        seen.add(key);
        this.skipWhitespace();
        if (text[this.i] !== ':') this.fail('expected ":"');
        this.i++;
        obj[key] = this.value(depth + 1);
        this.skipWhitespace();
        if (text[this.i] === ',') {
          this.i++;
          continue;
        }
        if (text[this.i] === '}') {
          this.i++;
          return obj;
        }
        this.fail('expected "," or "}"');
      }
    }
    if (c === '[') {
      this.i++;
      const arr: unknown[] = [];
      this.skipWhitespace();
      if (text[this.i] === ']') {
        this.i++;
        return arr;
      }
      for (;;) {
        arr.push(this.value(depth + 1));
        this.skipWhitespace();
        if (text[this.i] === ',') {
          this.i++;
          continue;
        }
        if (text[this.i] === ']') {
          this.i++;
          return arr;
        }
        this.fail('expected "," or "]"');
      }
    }
    if (c === '"') return this.string();
    if (c === 't' && text.startsWith('true', this.i)) return (this.i += 4), true;
    if (c === 'f' && text.startsWith('false', this.i)) return (this.i += 5), false;
    if (c === 'n' && text.startsWith('null', this.i)) return (this.i += 4), null;
    if (c === '-' || (c !== undefined && c >= '0' && c <= '9')) return this.number();
    return this.fail('unexpected token');
  }
}
