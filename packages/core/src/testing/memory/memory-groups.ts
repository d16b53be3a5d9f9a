import type { LineParams } from "../../store/store-params";
import { keyOf, type MemoryState } from "./memory-state";

/** Lets a serial line that a dead job holds go on: as `JobStore.releaseLine`. */
export function releaseLine(state: MemoryState, params: LineParams): boolean {
  return state.heldLines.delete(keyOf(params.queue, params.key));
}
