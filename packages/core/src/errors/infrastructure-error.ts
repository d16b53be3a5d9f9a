import { ErrorCode } from "./error-codes";
import { StintError } from "./stint-error";

/**
 * The database or the network failed in a way that trying again may fix
 * (connection lost, server restarting, serialization failure, deadlock).
 * Store implementations translate their driver's errors into this class;
 * workers back off and carry on when they meet it.
 *
 * @example
 * ```ts
 * throw new InfrastructureError("connection terminated", { cause: err, sqlState: "57P01" });
 * ```
 */
export class InfrastructureError extends StintError {
  readonly sqlState: string | undefined;

  constructor(message: string, options?: { cause?: unknown; sqlState?: string }) {
    super(ErrorCode.Infrastructure, message, options);
    this.sqlState = options?.sqlState;
  }
}

/**
 * The database refused a statement for a reason retrying will not fix
 * (a constraint, a permission, a missing table).
 */
export class DatabaseError extends StintError {
  readonly sqlState: string | undefined;

  constructor(message: string, options?: { cause?: unknown; sqlState?: string }) {
    super(ErrorCode.Database, message, options);
    this.sqlState = options?.sqlState;
  }
}
