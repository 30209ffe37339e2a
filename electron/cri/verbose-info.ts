/** The verbose-info shaping is pure and the renderer needs it too (crictl inspectp view): it lives in shared/. */
export * from '../../shared/domain/verbose-info';
