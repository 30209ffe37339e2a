// spdy-transport ships no types; this module is the SPDY/2 and SPDY/3 header dictionaries, keyed by version
declare module 'spdy-transport/lib/spdy-transport/protocol/spdy/dictionary.js' {
  const dictionaries: Record<number, Buffer>;
  export default dictionaries;
}
