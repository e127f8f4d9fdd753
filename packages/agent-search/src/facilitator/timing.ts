/**
 * @module facilitator/timing
 * Wraps a facilitator to measure its verify and settle times, so the benchmark can subtract the
 * facilitator's own time (signature check, simulation, a mined transaction) from the paid latency
 * and report what the payment layer adds.
 */
import type { PaymentPayload, PaymentRequirements, SettleResponse, VerifyResponse } from '@x402/core/types';

export interface TimedFacilitator<F> {
  facilitator: F;
  /** Milliseconds per call, in call order. */
  timings: { op: 'verify' | 'settle'; ms: number }[];
}

export function withTimings<F extends { verify(p: PaymentPayload, r: PaymentRequirements): Promise<VerifyResponse>; settle(p: PaymentPayload, r: PaymentRequirements): Promise<SettleResponse> }>(
  inner: F,
): TimedFacilitator<F> {
  const timings: TimedFacilitator<F>['timings'] = [];
  const timed = Object.create(inner) as F;
  timed.verify = async (p, r) => {
    const t0 = performance.now();
    try {
      return await inner.verify(p, r);
    } finally {
      timings.push({ op: 'verify', ms: performance.now() - t0 });
    }
  };
  timed.settle = async (p, r) => {
    const t0 = performance.now();
    try {
      return await inner.settle(p, r);
    } finally {
      timings.push({ op: 'settle', ms: performance.now() - t0 });
    }
  };
  return { facilitator: timed, timings };
}
