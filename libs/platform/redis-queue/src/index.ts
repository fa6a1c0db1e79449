export { createRedisConnection, redisOptions, type Redis, type RedisConnectionOptions, type RedisConnectionRole } from './redis-connection';
export { toKeepJobs, toWorkerKeepJobs, type JobRemoval, type JobRetention } from './retention';
export { checkQueueName, createQueue, type QueueFactoryOptions } from './queue-factory';
export { JobTimeoutError, createWorker, type JobProcessor, type WorkerFactoryOptions } from './worker-factory';
export { createQueueEvents, type QueueEventsFactoryOptions } from './queue-events-factory';
export { UnrecoverableError, type Job, type Queue, type QueueEvents, type Worker } from 'bullmq';
