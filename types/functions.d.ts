// The pure API, identical in @agentx/clarify-node and @agentx/clarify-wasm. Each function
// returns the success envelope and throws a ClarifyError (with `.code`) otherwise.
import type * as T from './types'

export declare function request(input: T.RequestInput): T.Ok<T.MutationResult>
export declare function answer(input: T.AnswerInput): T.Ok<T.MutationResult>
export declare function followUp(input: T.FollowUpInput): T.Ok<T.MutationResult>
export declare function resolve(input: T.ResolveInput): T.Ok<T.MutationResult>
export declare function escalate(input: T.CloseInput): T.Ok<T.MutationResult>
export declare function abandon(input: T.CloseInput): T.Ok<T.MutationResult>
export declare function monitor(input: T.MonitorInput): T.Ok<T.MonitorResult>
export declare function verify(input: T.VerifyInput): T.Ok<T.VerifyResult>
export declare function audit(input: T.AuditInput): T.Ok<T.AuditResult>
export declare function stats(input: T.StatsInput): T.Ok<T.StatsResult>
export declare function list(input: T.ListInput): T.Ok<T.ListResult>
export declare function show(input: T.ShowInput): T.Ok<T.ShowResult>
export declare function ready(input: T.ReadyInput): T.Ok<T.ReadyResult>
export declare function setStatus(input: T.SetStatusInput): T.Ok<T.SetStatusResult>
export declare function parseWorkflow(input: T.ParseInput): T.Ok<{ workflow: T.Workflow }>
export declare function parseConfig(input: T.ParseInput): T.Ok<{ config: T.Config }>
export declare function defaultWorkflows(input?: {}): T.Ok<{ workflows: Record<string, string>; config: string }>
export declare function renderMarkdown(input: T.RenderInput): T.Ok<{ text: string }>
export declare function renderText(input: T.RenderInput & { color?: boolean }): T.Ok<{ text: string }>
export declare function transitions(input?: {}): T.Ok<{ transitions: T.Transitions }>
export declare function errorCodes(input?: {}): T.Ok<{ codes: { code: T.ErrorCode; class: T.ErrorClass }[] }>
export declare function version(input?: {}): T.Ok<{ version: string }>
export declare function signalsParse(input: T.SignalsParseInput): T.Ok<T.SignalsParseResult>
export declare function extractJson(input: T.ExtractJsonInput): T.Ok<T.ExtractJsonResult>
export declare function signalsIngest(input: T.SignalsIngestInput): T.Ok<T.SignalsIngestResult>
export declare function resumePrompt(input: T.ResumePromptInput): T.Ok<T.ResumePromptResult>
export declare function delegationMetrics(input: T.DelegationMetricsInput): T.Ok<T.DelegationMetricsResult>
export declare function unwrap<R>(envelope: T.Envelope<R>): T.Ok<R>
