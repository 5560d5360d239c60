/**
 * An object's own field by a name known only at run time (tables of recipe field names: the
 * dry-run's backend details, the not-yet table), or undefined; inherited names never match.
 */
export function ownField(o: object, key: string): unknown {
  return Object.hasOwn(o, key) ? Object.getOwnPropertyDescriptor(o, key)?.value : undefined;
}
