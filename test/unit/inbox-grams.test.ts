// SQLite's grams of an inbox entry (relay/storage/inbox.ts): shortGramTokens, built from tables for
// ASCII, must be the reference definition's text (shortGramsOf, gramToken) token for token, in order.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { gramToken, shortGramsOf, shortGramTokens } from '../../relay/storage/inbox.js';

const reference = (fields: string[]) => shortGramsOf(fields).map(gramToken).join(' ');

test('plain, repeated and empty fields: the same tokens in the same order', () => {
  for (const fields of [
    ['bench sender@example.test', 'user1@example.test', 'your receipt #12', 'thanks for your order. thanks for your order.'],
    ['', '', '', ''],
    ['aaaa', 'aa', 'a', ''],
    ['f: x', 't:', 's: s:', '  '],
  ]) {
    assert.equal(shortGramTokens(fields), reference(fields));
  }
});

test('non-ASCII, surrogate pairs, lone surrogates and control characters: the same tokens', () => {
  for (const fields of [
    ['ëlodie <é@x.test>', 'zoë@x.test', 'café – déjà vu', 'naïve ë'],
    ['😀a😀😀', 'a😀b', '\ud83d', 'x\ude00\ud83d'],
    ['\u0000\u007f\u0080', '日本語のテキスト', 'ab日', '\ufffd\ufffd'],
  ]) {
    assert.equal(shortGramTokens(fields), reference(fields));
  }
});

test('random fields from a mixed alphabet: the same tokens', () => {
  const alphabet = ['a', 'b', 'Z', ' ', '@', '.', '\u0000', '\u007f', 'é', 'ë', '日', '😀', '\ud83d', '\ude00', '"', "'"];
  let seed = 7;
  const random = (n: number) => {
    seed = (seed * 1103515245 + 12345) % 2147483648;
    return seed % n;
  };
  for (let run = 0; run < 300; run++) {
    const fields = Array.from({ length: 4 }, () => Array.from({ length: random(40) }, () => alphabet[random(alphabet.length)]).join(''));
    assert.equal(shortGramTokens(fields), reference(fields), JSON.stringify(fields));
  }
});
