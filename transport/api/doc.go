// Package api is the HTTP API of TRANSPORT.md §5–§6 over a host.Registry,
// as one http.Handler: session control, approvals, history and the SSE
// streams. Errors are {"error":{"code","message"}} with a 4xx or 5xx status;
// a request that is refused changes nothing. Optional bearer-token
// authentication covers every route, the streams included; CORS answers
// only the configured origins.
package api
