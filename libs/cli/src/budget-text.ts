/** The budgets set on a task or on a schedule's runs, `5000 tokens, $0.5`; '' when neither is. */
export function budgetText(budgets: { maxTokens: number | null; maxCostUsd: number | null }): string {
  return [
    ...(budgets.maxTokens === null ? [] : [`${budgets.maxTokens} tokens`]),
    ...(budgets.maxCostUsd === null ? [] : [`$${budgets.maxCostUsd}`]),
  ].join(', ');
}
