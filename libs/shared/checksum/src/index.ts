export { crc32c } from './crc32c';
