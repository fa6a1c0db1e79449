export { MinHeap } from './min-heap';
