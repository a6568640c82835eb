import { expect } from 'vitest';
import type { ScenarioReport } from './harness.js';

/** The invariants of issue 6, as one assertion that lists every violation it found. */
export function expectCrashSafe(report: ScenarioReport): void {
  expect(report.violations).toEqual([]);
  expect(report.nonTerminal).toBe(0);
  expect(report.untraceable).toBe(0);
  expect(report.doublePayments).toBe(0);
  expect(report.secondReservations).toBe(0);
  expect(report.orders).toBeGreaterThan(0);
  expect(report.kills).toBeGreaterThan(0);
}
