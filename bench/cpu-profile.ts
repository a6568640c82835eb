import { writeFile } from 'node:fs/promises';
import { Session } from 'node:inspector/promises';

/**
 * BENCH_CPU_PROFILE=<file prefix>: a V8 CPU profile of this process (the gateway under test)
 * over the measured load only, written as `<prefix>-<label>.cpuprofile` for Chrome DevTools or
 * any .cpuprofile viewer. Without the variable, start() answers a stop() that does nothing.
 */
export async function startCpuProfile(label: string, progress: (line: string) => void): Promise<() => Promise<void>> {
  const prefix = process.env.BENCH_CPU_PROFILE;
  if (!prefix) return async () => undefined;
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.setSamplingInterval', { interval: 200 });
  await session.post('Profiler.start');
  return async () => {
    const { profile } = await session.post('Profiler.stop');
    session.disconnect();
    const file = `${prefix}-${label.replace(/[^\w.-]+/g, '_')}.cpuprofile`;
    await writeFile(file, JSON.stringify(profile));
    progress(`CPU profile of the measured load: ${file}`);
  };
}
