import { Readable } from 'node:stream';
import type { PromData, PromHistogramData, PromMetrics } from 'prom2javascript';
import { getMetricsFromStream } from 'prom2javascript';

/** A scrape of `/metrics`, parsed by a Prometheus text-format parser (prom2javascript), with lookups by family and labels. */
export class Scrape {
  constructor(readonly families: PromMetrics) {}

  static async of(url: string): Promise<Scrape> {
    const res = await fetch(url);
    if (res.status !== 200) throw new Error(`GET ${url}: ${res.status}`);
    const type = res.headers.get('content-type') ?? '';
    if (!type.startsWith('text/plain')) throw new Error(`GET ${url}: content-type ${type}`);
    return new Scrape(await getMetricsFromStream(Readable.from([await res.text()])));
  }

  family(name: string, type: 'counter' | 'gauge' | 'histogram'): PromMetrics[string] {
    const family = this.families[name];
    if (!family) throw new Error(`no metric family ${name}; families: ${Object.keys(this.families).join(', ')}`);
    if (family.type !== type) throw new Error(`${name} is a ${family.type}, not a ${type}`);
    return family;
  }

  /** The samples of a counter or gauge whose labels include `labels`. */
  samples(name: string, type: 'counter' | 'gauge', labels: Record<string, string> = {}): PromData[] {
    return (this.family(name, type).data as PromData[]).filter((d) => matches(d.labels, labels));
  }

  /** Sum of the values of the counter's or gauge's samples matching `labels`. */
  value(name: string, type: 'counter' | 'gauge', labels: Record<string, string> = {}): number {
    return this.samples(name, type, labels).reduce((sum, d) => sum + d.value, 0);
  }

  /** The histogram series matching `labels`. */
  histograms(name: string, labels: Record<string, string> = {}): PromHistogramData[] {
    return (this.family(name, 'histogram').data as PromHistogramData[]).filter((d) => matches(d.labels, labels));
  }

  /** Every label set of every series of the family (label bound checks). */
  labelSets(name: string): Record<string, string>[] {
    return this.families[name]?.data.map((d) => d.labels) ?? [];
  }
}

const matches = (actual: Record<string, string>, wanted: Record<string, string>): boolean =>
  Object.entries(wanted).every(([key, value]) => actual[key] === value);
