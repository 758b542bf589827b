// autocannon ships no type declarations; the benchmarks use it loosely.
declare module 'autocannon';
