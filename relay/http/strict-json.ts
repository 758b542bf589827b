// A strict JSON parser for request bodies. JSON.parse silently keeps the last of repeated keys and
// accepts lone surrogates; the contract refuses both, and nesting deep enough to hurt. Objects are
// created without a prototype so a "__proto__" key is plain data.
export class JsonSyntaxError extends Error {
  override name = 'JsonSyntaxError';
}

const MAX_DEPTH = 64;

export function parseStrictJson(text: string): unknown {
  let i = 0;

  const fail = (what: string): never => {
    throw new JsonSyntaxError(`${what} at position ${i}`);
  };
  const skipWhitespace = () => {
    for (;;) {
      const c = text.charCodeAt(i);
      if (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09) i++;
      else return;
    }
  };

  const parseString = (): string => {
    // i is at the opening quote
    i++;
    let out = '';
    let start = i;
    for (;;) {
      const c = text.charCodeAt(i);
      if (Number.isNaN(c)) fail('unterminated string');
      if (c === 0x22) {
        out += text.slice(start, i);
        i++;
        break;
      }
      if (c < 0x20) fail('control character in string');
      if (c >= 0xd800 && c <= 0xdfff) {
        const next = text.charCodeAt(i + 1);
        if (c <= 0xdbff && next >= 0xdc00 && next <= 0xdfff) {
          i += 2;
          continue;
        }
        fail('lone surrogate in string');
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
            const readUnit = (): number => {
              const hex = text.slice(i, i + 4);
              if (!/^[0-9a-fA-F]{4}$/.test(hex)) fail('bad unicode escape');
              i += 4;
              return parseInt(hex, 16);
            };
            const unit = readUnit();
            if (unit >= 0xd800 && unit <= 0xdbff) {
              if (text[i] !== '\\' || text[i + 1] !== 'u') fail('lone surrogate escape');
              i += 2;
              const low = readUnit();
              if (low < 0xdc00 || low > 0xdfff) fail('lone surrogate escape');
              out += String.fromCharCode(unit, low);
            } else if (unit >= 0xdc00 && unit <= 0xdfff) {
              fail('lone surrogate escape');
            } else {
              out += String.fromCharCode(unit);
            }
            break;
          }
          default:
            fail('bad escape');
        }
        start = i;
        continue;
      }
      i++;
    }
    return out;
  };

  const parseNumber = (): number => {
    const match = /^-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/.exec(text.slice(i, i + 400));
    if (!match) return fail('bad number');
    i += match[0].length;
    return Number(match[0]);
  };

  const parseValue = (depth: number): unknown => {
    if (depth > MAX_DEPTH) fail('nesting too deep');
    skipWhitespace();
    const c = text[i];
    if (c === '{') {
      i++;
      const obj: Record<string, unknown> = Object.create(null);
      const seen = new Set<string>();
      skipWhitespace();
      if (text[i] === '}') {
        i++;
        return obj;
      }
      for (;;) {
        skipWhitespace();
        if (text[i] !== '"') fail('expected a key');
        const key = parseString();
        if (seen.has(key)) fail(`repeated key "${key.slice(0, 40)}"`);
        seen.add(key);
        skipWhitespace();
        if (text[i] !== ':') fail('expected ":"');
        i++;
        obj[key] = parseValue(depth + 1);
        skipWhitespace();
        if (text[i] === ',') {
          i++;
          continue;
        }
        if (text[i] === '}') {
          i++;
          return obj;
        }
        fail('expected "," or "}"');
      }
    }
    if (c === '[') {
      i++;
      const arr: unknown[] = [];
      skipWhitespace();
      if (text[i] === ']') {
        i++;
        return arr;
      }
      for (;;) {
        arr.push(parseValue(depth + 1));
        skipWhitespace();
        if (text[i] === ',') {
          i++;
          continue;
        }
        if (text[i] === ']') {
          i++;
          return arr;
        }
        fail('expected "," or "]"');
      }
    }
    if (c === '"') return parseString();
    if (c === 't' && text.startsWith('true', i)) return (i += 4), true;
    if (c === 'f' && text.startsWith('false', i)) return (i += 5), false;
    if (c === 'n' && text.startsWith('null', i)) return (i += 4), null;
    if (c === '-' || (c !== undefined && c >= '0' && c <= '9')) return parseNumber();
    return fail('unexpected token');
  };

  const value = parseValue(0);
  skipWhitespace();
  if (i !== text.length) fail('unexpected data after the JSON value');
  return value;
}
