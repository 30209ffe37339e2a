import { PodscopeError } from '../../../shared/domain/errors';

/**
 * One-to-one name ↔ id reservations (containerd internal/registrar). Synchronous on purpose: two concurrent runs with
 * the same name race here and exactly one wins before either touches the host.
 */
export class NameRegistrar {
  private readonly byName = new Map<string, string>();
  private readonly byId = new Map<string, string>();

  /** what the names belong to, for the error messages ("sandbox" or "container") */
  constructor(private readonly kind: string = 'sandbox') {}

  reserve(name: string, id: string): void {
    const holder = this.byName.get(name);
    if (holder === id) return;
    if (holder !== undefined) {
      throw new PodscopeError(
        'AlreadyExists',
        `failed to reserve ${this.kind} name ${JSON.stringify(name)}: name ${JSON.stringify(name)} is reserved for ${JSON.stringify(holder)}`,
        {
          details: { name, holder },
        },
      );
    }
    const previous = this.byId.get(id);
    if (previous !== undefined)
      throw new PodscopeError('AlreadyExists', `${this.kind} ${id} already holds name ${JSON.stringify(previous)}`);
    this.byName.set(name, id);
    this.byId.set(id, name);
  }

  releaseByName(name: string): void {
    const id = this.byName.get(name);
    if (id === undefined) return;
    this.byName.delete(name);
    this.byId.delete(id);
  }

  holder(name: string): string | undefined {
    return this.byName.get(name);
  }
}
