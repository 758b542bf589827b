/** The SDK version, sent in the User-Agent header. Kept in step with package.json by the release. */
export const VERSION = '0.1.0';
