// Strict UTF-8 for binary formats: encoding refuses strings that UTF-8 cannot represent exactly
// (lone surrogates would silently become U+FFFD, so two different strings could share one
// encoding), decoding refuses malformed bytes.

interface StrictTextCodecs {
  TextEncoder: new () => { encode(input: string): Uint8Array };
  TextDecoder: new (label: string, options: { fatal: boolean }) => { decode(input: Uint8Array): string };
}

const codecs = globalThis as unknown as StrictTextCodecs;
const encoder = new codecs.TextEncoder();
const fatalDecoder = new codecs.TextDecoder('utf-8', { fatal: true });

/** True when every UTF-16 surrogate in `text` is part of a well-formed pair. */
export function isWellFormedText(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    const unit = text.charCodeAt(i);
    if (unit < 0xd800 || unit > 0xdfff) continue;
    if (unit > 0xdbff) return false;
    const next = i + 1 < text.length ? text.charCodeAt(i + 1) : 0;
    if (next < 0xdc00 || next > 0xdfff) return false;
    i++;
  }
  return true;
}

/** UTF-8 bytes of a well-formed string; a TypeError for lone surrogates (caller misuse). */
export function encodeUtf8Strict(text: string): Uint8Array {
  if (!isWellFormedText(text)) throw new TypeError('string holds a lone UTF-16 surrogate and has no exact UTF-8 form');
  return encoder.encode(text);
}

/** The string of well-formed UTF-8 bytes, or undefined when the bytes are not UTF-8. */
export function decodeUtf8Strict(bytes: Uint8Array): string | undefined {
  try {
    return fatalDecoder.decode(bytes);
  } catch {
    return undefined;
  }
}
