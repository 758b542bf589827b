// What every admin request body is checked against before an aggregate looks at it: a JSON
// object, and the required string and choice fields with the messages the API gives for them.
import { ApiError, validationError } from '../errors.js';

export type AdminBody = Record<string, unknown>;

export function asBody(value: unknown): AdminBody {
  if (value === undefined || value === null) return {};
  if (typeof value !== 'object' || Array.isArray(value)) throw new ApiError('invalid_request', 'The body must be a JSON object.');
  return value as AdminBody;
}

export function requireString(body: AdminBody, field: string, max = 200): string {
  const value = body[field];
  if (typeof value !== 'string' || value.trim().length === 0 || value.length > max) {
    throw validationError([{ field, message: `is required: a string of 1 to ${max} characters` }]);
  }
  return value.trim();
}

export function requireOneOf<T extends string>(body: AdminBody, field: string, allowed: readonly T[]): T {
  const value = body[field];
  if (typeof value !== 'string' || !(allowed as readonly string[]).includes(value)) {
    throw validationError([{ field, message: `must be one of ${allowed.join(', ')}` }]);
  }
  return value as T;
}
