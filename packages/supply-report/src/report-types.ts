/**
 * @module report-types
 * Row types, taken from the SDK's runtime schema so the document and its validation never drift apart.
 */
import type { SupplyReport } from '@vault/sdk';

export type { SupplyReport };
export type XrplIssuerRow = SupplyReport['chains']['xrpl']['issuers'][number];
export type StellarIssuerRow = SupplyReport['chains']['stellar']['issuers'][number];
export type SolanaMintRow = SupplyReport['chains']['solana']['mints'][number];
export type PolygonChain = SupplyReport['chains']['polygon'];
export type PolygonContractRow = PolygonChain['contracts'][number];
