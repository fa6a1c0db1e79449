export { EXIT_CONFIG, configOrExit, runUntilSignalled, type ProcessLike } from './service-process';
