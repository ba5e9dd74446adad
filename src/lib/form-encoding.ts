// One `application/x-www-form-urlencoded` name or value (WHATWG URL §5.1): `+` is a space, percent-encoding must decode to UTF-8.

/** The decoded text, or undefined when its percent-encoding is not UTF-8 (decodeURIComponent would throw; URLSearchParams would put U+FFFD in silently). */
export function decodeFormComponent(text: string): string | undefined {
  try {
    return decodeURIComponent(text.replace(/\+/g, ' '));
  } catch {
    return undefined;
  }
}
