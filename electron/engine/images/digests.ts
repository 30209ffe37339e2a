/** A digest's hex part (`sha256:abc…` ⇒ `abc…`), the name of its blob or layer in the store. */
export const hexOf = (digest: string) => digest.slice('sha256:'.length);
