// Minimal typing for the parts of autocannon 8 the bench uses (the package ships no types).
declare module 'autocannon' {
  interface Histogram { average: number; p50: number; p99: number; total: number }
  interface Result { requests: Histogram; latency: Histogram; non2xx: number; errors: number; timeouts: number; '2xx': number; statusCodeStats?: Record<string, { count: number }> }
  function autocannon(options: Record<string, unknown>): Promise<Result>;
  export default autocannon;
}
