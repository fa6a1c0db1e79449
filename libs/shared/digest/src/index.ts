export { Sha256, sha256 } from './sha256';
