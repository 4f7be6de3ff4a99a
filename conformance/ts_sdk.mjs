// Loading the official TypeScript SDK's client from a conformance/toolchain.py prefix, for
// the Node drivers of the interop and ext-auth-idp tests (interop/ts_oauth_step_up.mjs,
// packages/mcpkit-ext-auth/tests_idp/ts_oauth_client.mjs).
//
// loadClient(sdk, prefix) -> {Client, StreamableHTTPClientTransport, UnauthorizedError}
//   sdk: "v1" (@modelcontextprotocol/sdk) or "v2" (@modelcontextprotocol/client);
//   prefix: the npm prefix holding it. Each package is imported through its exports map.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

/** Import a package's ESM entry point from PREFIX through its exports map. */
export async function importFrom(prefix, name, subpath = ".") {
  const dir = join(prefix, "node_modules", ...name.split("/"));
  const manifest = JSON.parse(readFileSync(join(dir, "package.json"), "utf8"));
  const exported = manifest.exports[subpath] ?? manifest.exports["./*"];
  const entry = exported.import;
  let file = typeof entry === "string" ? entry : entry.default;
  if (file.includes("*")) file = file.replace("*", subpath.slice(2));
  return import(pathToFileURL(join(dir, file)).href);
}

export async function loadClient(sdk, prefix) {
  if (sdk === "v1") {
    const v1 = "@modelcontextprotocol/sdk";
    const { Client } = await importFrom(prefix, v1, "./client");
    const { StreamableHTTPClientTransport } = await importFrom(
      prefix,
      v1,
      "./client/streamableHttp.js",
    );
    const { UnauthorizedError } = await importFrom(prefix, v1, "./client/auth.js");
    return { Client, StreamableHTTPClientTransport, UnauthorizedError };
  }
  if (sdk === "v2") {
    const { Client, StreamableHTTPClientTransport, UnauthorizedError } = await importFrom(
      prefix,
      "@modelcontextprotocol/client",
    );
    return { Client, StreamableHTTPClientTransport, UnauthorizedError };
  }
  throw new Error(`SDK must be v1 or v2, not ${sdk}`);
}

/**
 * The OAuthClientProvider as the SDK's examples write it, keeping everything in memory:
 * dynamic registration as a public client (`none`) with REDIRECT as its one redirect URI.
 * Returns {provider, state}: state.client (registered), state.registrations (each saved),
 * state.tokens (current), state.saved (every token response), state.visits (each
 * authorization URL), state.pending (the URL to open, set by redirectToAuthorization).
 */
export function inMemoryProvider({ redirect, clientName, grantTypes }) {
  const state = { registrations: [], saved: [], visits: [], pending: undefined };
  const provider = {
    get redirectUrl() {
      return redirect;
    },
    get clientMetadata() {
      return {
        client_name: clientName,
        redirect_uris: [redirect],
        grant_types: grantTypes,
        response_types: ["code"],
        token_endpoint_auth_method: "none",
      };
    },
    clientInformation: () => state.client,
    saveClientInformation: (info) => {
      state.client = info;
      state.registrations.push(info);
    },
    tokens: () => state.tokens,
    saveTokens: (tokens) => {
      state.tokens = tokens;
      state.saved.push(tokens);
    },
    redirectToAuthorization: (authorizationUrl) => {
      state.visits.push(authorizationUrl.href);
      state.pending = authorizationUrl;
    },
    saveCodeVerifier: (verifier) => {
      state.verifier = verifier;
    },
    codeVerifier: () => state.verifier,
  };
  return { provider, state };
}
