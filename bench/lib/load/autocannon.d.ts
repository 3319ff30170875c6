// The part of autocannon's API the closed-loop load uses (the package has no types).
declare module "autocannon" {
  interface Options {
    url: string;
    method?: string;
    body?: string;
    headers?: Record<string, string>;
    connections?: number;
    duration?: number;
    verifyBody?: (body: string) => boolean;
  }
  interface Histogram {
    average: number;
    p50: number;
    p99: number;
  }
  interface Result {
    requests: Histogram;
    latency: Histogram;
    non2xx: number;
    errors: number;
    mismatches: number;
    "2xx": number;
  }
  export default function autocannon(options: Options): Promise<Result>;
}
