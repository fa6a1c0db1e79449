/** A `kid`: printable, short, safe in headers and logs (RFC 7638 thumbprints are 43 characters). */
export const KEY_ID_PATTERN = /^[A-Za-z0-9._-]{1,64}$/;
