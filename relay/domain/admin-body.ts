// What every admin request body is checked against before an aggregate looks at it: a JSON
// object of strings storage can hold, and the required string and choice fields with the
// messages the API gives for them.
import { ApiError, validationError } from '../errors.js';
import { unstorableFields } from './storable-text.js';

export type AdminBody = Record<string, unknown>;

/** A JSON object none of whose strings carries what storage cannot hold (storable-text.ts). */
export function asBody(value: unknown): AdminBody {
  if (value === undefined) return {};
  // A JSON null is a body, and not an object (CONTRACT section 1): 400, as an array or a string is.
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new ApiError('invalid_request', 'The body must be a JSON object.');
  const unstorable = unstorableFields(value);
  if (unstorable.length > 0) throw validationError(unstorable);
  return value as AdminBody;
}

export function requireString(body: AdminBody, field: string, max = 200): string {
  const value = body[field];
  if (typeof value !== 'string' || value.trim().length === 0 || value.length > max) {
    throw validationError([{ field, message: `is required: a string of 1 to ${max} characters` }]);
  }
  return value.trim();
}

/**
 * One value of an enum of openapi.yaml. The choices are a record of every value (in the order the
 * message lists them), so naming the enum's type (`requireOneOf<Permission>`) makes a value
 * missing from or unknown to the spec a type error.
 */
export function requireOneOf<T extends string>(body: AdminBody, field: string, choices: Record<T, true>): T {
  const value = body[field];
  const allowed = Object.keys(choices);
  if (typeof value !== 'string' || !allowed.includes(value)) {
    throw validationError([{ field, message: `must be one of ${allowed.join(', ')}` }]);
  }
  return value as T;
}
