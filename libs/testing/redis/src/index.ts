export { connectTestRedis, deleteKeys, dumpKeys, testRedisOptions, uniquePrefix, type RedisEntry } from './redis-fixtures';
