export { CodedError, hasCode } from './coded-error';
export { AssertionFailure, assert, assertNever } from './assert';
