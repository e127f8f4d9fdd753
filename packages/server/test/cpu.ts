/**
 * CPU time from /proc (Linux), for the benches: a whole process (all threads) or one thread of it.
 * null where /proc is not there.
 */
import { readFileSync } from 'node:fs';

/** CPU seconds used so far by process `pid`, or by its thread `tid` (utime + stime, in clock ticks of 10 ms). */
export function procCpuSeconds(pid: number, tid?: number): number | null {
  try {
    const st = readFileSync(tid === undefined ? `/proc/${pid}/stat` : `/proc/${pid}/task/${tid}/stat`, 'utf8');
    const f = st.slice(st.lastIndexOf(')') + 2).split(' ');
    return (Number(f[11]) + Number(f[12])) / 100;
  } catch {
    return null;
  }
}
