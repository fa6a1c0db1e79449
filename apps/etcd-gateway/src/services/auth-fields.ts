// The credential fields of etcd's Auth requests as the gateway receives them: proto `string`
// fields decoded as bytes (see etcdServiceDefinitionWithRawAuthStrings), so nothing the client sent
// is replaced with U+FFFD before ward looks at it.
//
// - Passwords are byte strings end to end, as in etcd: any bytes (invalid UTF-8 and NUL included)
//   go to bcrypt exactly as sent.
// - User and role names must be valid UTF-8. etcd stores any bytes as a name; ward carries names as
//   text (the auth store, Raft entries, JWT claims, logs and the JSON gateway's answers), where
//   invalid bytes could only be replaced, so that `u\xff` and `u\xfe` would become one user. A name
//   that is not UTF-8 is refused with InvalidArgument (`user name is not valid UTF-8`), and since
//   no such user can exist, Authenticate answers it as etcd answers an unknown user.
import { isUtf8 } from 'node:buffer';
import { isWellFormedText } from '@ward/shared/binary';
import { wireError } from '@ward/etcd/wire-errors';

/** A proto string field as decoded: bytes from the wire, or a string built in process. */
export type WireText = Uint8Array | string | null | undefined;

/** A request type with its string fields as {@link WireText}. */
export type WithWireText<T> = { readonly [K in keyof T]: T[K] extends string ? WireText : T[K] };

export type NameKind = 'user' | 'role';

/** The name as text, or undefined when its bytes are not valid UTF-8 (or its text not well-formed). */
export function nameOrUndefined(value: WireText): string | undefined {
  if (value === null || value === undefined) return '';
  if (typeof value === 'string') return isWellFormedText(value) ? value : undefined;
  if (!isUtf8(value)) return undefined;
  return Buffer.from(value.buffer, value.byteOffset, value.byteLength).toString('utf8');
}

/** The name as text; InvalidArgument `<kind> name is not valid UTF-8` otherwise. */
export function nameText(value: WireText, kind: NameKind): string {
  const name = nameOrUndefined(value);
  if (name === undefined) throw wireError(kind === 'user' ? 'UserNameNotUtf8' : 'RoleNameNotUtf8');
  return name;
}

/**
 * A copy of the password's bytes (the caller zeroes it when done). A string, which only an
 * in-process caller passes, stands for its UTF-8 bytes.
 */
export function passwordBytes(value: WireText): Uint8Array {
  if (value === null || value === undefined) return new Uint8Array(0);
  if (typeof value === 'string') return new Uint8Array(Buffer.from(value, 'utf8'));
  return new Uint8Array(value);
}
