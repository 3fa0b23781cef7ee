/** One line of the benchmark report's table; its own module so row builders need not import the report. */
export type Row = [benchmark: string, figure: string, value: string, target: string, met: string];
