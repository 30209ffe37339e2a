import type { ErrorCode } from '../../shared/domain/errors';

/** One exit code per error code, so scripts can tell "not found" from "plugin failed" without parsing text. */
export const EXIT_CODES: Record<ErrorCode, number> = {
  Internal: 1,
  InvalidArgument: 2,
  NotFound: 3,
  AlreadyExists: 4,
  FailedPrecondition: 5,
  CniError: 6,
  RuntimeError: 7,
  Unavailable: 8,
  DeadlineExceeded: 9,
  Canceled: 10,
  Unimplemented: 11,
};
