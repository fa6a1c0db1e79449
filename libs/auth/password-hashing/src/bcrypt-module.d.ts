// Types for the parts of the native `bcrypt` package (v6) this project uses; the package ships none.
declare module 'bcrypt' {
  /** A salt string `$2<minor>$<cost>$<22 chars>`; runs on the libuv threadpool. */
  export function genSalt(rounds: number, minor: 'a' | 'b'): Promise<string>;
  /** Hashes `data` (its bytes, NULs included) with `salt`; runs on the libuv threadpool. */
  export function hash(data: string | Buffer, salt: string): Promise<string>;
  /** Constant-time comparison of bcrypt(data, salt of encrypted) with encrypted; on the threadpool. */
  export function compare(data: string | Buffer, encrypted: string): Promise<boolean>;
  const bcrypt: { genSalt: typeof genSalt; hash: typeof hash; compare: typeof compare };
  export default bcrypt;
}
