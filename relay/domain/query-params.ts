// Reading a list's query string, the one way every list endpoint does: each parameter at most
// once (a repeat is a validation error), the broken rules gathered into one validation_error, and
// a filter whose value no stored row can hold (a NUL, storable-text.ts) noted as matching nothing,
// so the list answers an empty page without asking storage (where PostgreSQL would refuse it).
import { validationError, type ErrorDetail } from '../errors.js';
import { isStorableText } from './storable-text.js';

export class QueryParams {
  readonly details: ErrorDetail[] = [];
  private nothingMatches = false;

  constructor(private readonly params: URLSearchParams) {}

  /** A parameter given at most once. */
  single(name: string): string | undefined {
    const all = this.params.getAll(name);
    if (all.length > 1) this.details.push({ field: name, message: 'must be given at most once' });
    return all[0];
  }

  /** A value compared with stored text: one that cannot be stored matches nothing. */
  filter(name: string): string | undefined {
    const value = this.single(name);
    if (value !== undefined && !isStorableText(value)) this.nothingMatches = true;
    return value;
  }

  /** An integer from min to max, else `fallback` when absent. */
  integer(name: string, range: { min: number; max: number; fallback: number }): number {
    const raw = this.single(name);
    if (raw === undefined) return range.fallback;
    const digits = String(range.max).length;
    if (!new RegExp(`^\\d{1,${digits}}$`).test(raw) || Number(raw) < range.min || Number(raw) > range.max) {
      this.details.push({ field: name, message: `must be an integer from ${range.min} to ${range.max}` });
      return range.fallback;
    }
    return Number(raw);
  }

  /** Throws the validation_error of every broken rule; answers whether any filter can match. */
  finish(): { matchesNothing: boolean } {
    if (this.details.length > 0) throw validationError(this.details);
    return { matchesNothing: this.nothingMatches };
  }
}
