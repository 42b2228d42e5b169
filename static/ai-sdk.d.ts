// Types of floe/ai-sdk (ai-sdk.mjs): an AI SDK language model as a Floe model.
// Structural, so that the package needs none of the AI SDK's: any
// LanguageModelV3 or LanguageModelV4 (@ai-sdk/provider) fits.
import type { LLM, TokenCounts } from "./floe.js";

/** What fromAISDK reads of an AI SDK LanguageModel (specification v3 or v4). */
export interface AISDKLanguageModel {
  readonly specificationVersion: "v3" | "v4";
  readonly provider: string;
  readonly modelId: string;
  doStream(options: any): PromiseLike<{ stream: { getReader(): unknown } }>;
}

/** The AI SDK's providerOptions: keyed by provider name (`{ anthropic: { … } }`). */
export type AISDKProviderOptions = Record<string, Record<string, unknown>>;

export interface FromAISDKOptions {
  /**
   * Sent with every request; a function gets the run's thinkingLevel (absent
   * when none) and returns them, for a provider's own thinking options.
   */
  providerOptions?: AISDKProviderOptions | ((request: { thinkingLevel: string | undefined }) => AISDKProviderOptions | undefined) | undefined;
  /** An integer, 1 or more. */
  maxOutputTokens?: number | undefined;
  temperature?: number | undefined;
  topP?: number | undefined;
  topK?: number | undefined;
  presencePenalty?: number | undefined;
  frequencyPenalty?: number | undefined;
  stopSequences?: string[] | undefined;
  seed?: number | undefined;
  /** Extra request headers. */
  headers?: Record<string, string> | undefined;
  /** session_meta.model_context_window of a session made with this model. */
  contextWindow?: number | undefined;
  /** The session totals the token_usage counts go on from (newLLM's argument, for compaction). */
  sessionTokens?: Partial<TokenCounts> | undefined;
}

/**
 * A Floe model (one conversation) that streams from model.doStream. Throws a
 * FloeError (bad_argument) for a value that is no such model, a
 * specificationVersion other than "v3" and "v4", or a bad option.
 */
export declare function fromAISDK(model: AISDKLanguageModel, options?: FromAISDKOptions): LLM & { readonly provider: string; readonly modelId: string };
