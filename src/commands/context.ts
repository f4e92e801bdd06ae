// What every command receives: its dependencies (deps.ts), who is calling, the organization
// header, and the request's own view of the store and read budget. Made by one factory for
// every face (request-context.ts). The parts have their homes: Deps in deps.ts, Details in
// details.ts, the budget in read-budget.ts, the view in request-view.ts, the process's
// organization hints in org-hints.ts, the type in command-context.ts; re-exported here for
// the commands.
export type { Deps } from './deps.ts';
export { detailsOf, type Details } from './details.ts';
export { chargeReads, READ_BUDGET_BYTES, READ_FLOOR_BYTES, settleReads, takeReads, type ReadBudget } from './read-budget.ts';
export { orgHint } from './org-hints.ts';
export { load, loadMany, prefetch, refresh, remember, type Wanted } from './request-view.ts';
export type { CommandContext, RequestView } from './command-context.ts';
