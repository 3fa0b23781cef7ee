import { createTaskForm, inDigits } from '../src/multipart';

describe('the multipart form of a create', () => {
  it('sends the budgets as text parts in digits, with an optional decimal point', () => {
    const form = createTaskForm({ message: 'go', maxTokens: 5000, maxCostUsd: 0.5, autoExecute: false }, []);
    expect([...form.entries()]).toEqual([
      ['message', 'go'],
      ['maxTokens', '5000'],
      ['maxCostUsd', '0.5'],
      ['autoExecute', 'false'],
    ]);
  });

  it('writes numbers that String() puts in exponent form in plain digits', () => {
    expect([inDigits(1e-7), inDigits(1.25e-7), inDigits(1e21), inDigits(1.5e22), inDigits(2.5), inDigits(200000)]).toEqual([
      '0.0000001',
      '0.000000125',
      '1000000000000000000000',
      '15000000000000000000000',
      '2.5',
      '200000',
    ]);
  });
});
