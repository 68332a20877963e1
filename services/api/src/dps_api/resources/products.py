"""``/products``: the list (admin keys also get inactive products and cost), reads of the current and
of a pinned version, create, and partial update (a new version)."""

from typing import Any
from uuid import UUID

import falcon
from pydantic import MISSING

from dps_common.auth.principal import Principal
from dps_common.auth.scopes import Scope
from dps_common.errors import not_found
from dps_common.http.app import Api
from dps_common.http.bodies import parse_body
from dps_common.http.operations import Operation, Paging, QueryParam
from dps_common.http.params import path_id
from dps_common.paging import PageRequest

from dps_api.domain.catalog_commands import NewProduct, ProductChanges
from dps_api.domain.catalog_views import ProductView
from dps_api.resources.collection import CollectionResource, ItemResource
from dps_api.resources.context import AppContext
from dps_api.schemas.catalog import (
    Product,
    ProductCreate,
    ProductList,
    ProductUpdate,
    render_product,
    tier_values,
)
from dps_api.schemas.common import patch
from dps_api.services.catalog import CatalogService

TAG = "Catalog"
PAGING = Paging(default=100, maximum=500, items_property="products")
_VISIBILITY = (
    "Keys with `products:cost` (admin) also see inactive products and the `cost` field; "
    "other keys see active products only, without cost."
)


def new_product(body: ProductCreate) -> NewProduct:
    return NewProduct(
        spec_id=body.specId,
        name=body.name,
        short_name=body.shortName,
        active=body.active,
        price_model=body.priceModel,
        price_frequency=body.priceFrequency,
        list_prices=body.listPrices,
        tiers=None if body.tiers is None else tier_values(body.tiers),
        locked=body.locked,
        cost=body.cost,
    )


def product_changes(body: ProductUpdate) -> ProductChanges:
    return ProductChanges(
        spec_id=patch(body.specId),
        name=patch(body.name),
        short_name=patch(body.shortName),
        active=patch(body.active),
        price_model=patch(body.priceModel),
        price_frequency=patch(body.priceFrequency),
        list_prices=patch(body.listPrices),
        tiers=patch(body.tiers if body.tiers is None or body.tiers is MISSING else tier_values(body.tiers)),
        locked=patch(body.locked),
        cost=patch(body.cost),
    )


class ProductsResource(CollectionResource[CatalogService, ProductView]):
    operations = {
        "GET": Operation(
            summary="List products (stable order).",
            scope=Scope.PRODUCTS_READ,
            response=ProductList,
            paging=PAGING,
            query=(QueryParam("active", {"type": "boolean"}, "Only active (true) or inactive (false) products."),),
            tag=TAG,
            description=_VISIBILITY,
            extra_scopes=(Scope.PRODUCTS_COST,),
            operation_id="listProducts",
        ),
        "POST": Operation(
            summary="Create a product (version 1).",
            scope=Scope.PRODUCTS_WRITE,
            response=Product,
            body=ProductCreate,
            status=201,
            errors=(409,),
            tag=TAG,
            description="409 `spec_id_taken` when the specId is in use. A locked product needs "
            "`locked-prices:write`, cost data `products:cost`.",
            extra_scopes=(Scope.LOCKED_PRICES_WRITE, Scope.PRODUCTS_COST),
            operation_id="createProduct",
        ),
    }

    paging = PAGING
    filters = ("active",)

    def list_page(self, principal: Principal, page: PageRequest, **filters: bool | None) -> list[ProductView]:
        return self._service.list_products(principal, page, filters["active"])

    def create(self, principal: Principal, req: falcon.Request) -> ProductView:
        return self._service.create_product(principal, new_product(parse_body(req, ProductCreate)))

    def render(self, view: ProductView) -> dict[str, Any]:
        return render_product(view)


class ProductResource(ItemResource[CatalogService, ProductView]):
    operations = {
        "GET": Operation(
            summary="Get a product's current version.",
            scope=Scope.PRODUCTS_READ,
            response=Product,
            tag=TAG,
            description=_VISIBILITY + " An inactive product is a 404 for them.",
            extra_scopes=(Scope.PRODUCTS_COST,),
            operation_id="getProduct",
        ),
        "PATCH": Operation(
            summary="Update a product; only the fields sent change, and any change makes a new version.",
            scope=Scope.PRODUCTS_WRITE,
            response=Product,
            body=ProductUpdate,
            tag=TAG,
            description="Changing `locked`, or the list prices or tiers of a locked product, needs "
            "`locked-prices:write`; cost data needs `products:cost`. Earlier versions stay readable at "
            "`/products/{productId}/versions/{version}`.",
            extra_scopes=(Scope.LOCKED_PRICES_WRITE, Scope.PRODUCTS_COST),
            operation_id="updateProduct",
        ),
    }

    what = "Product"

    def get(self, principal: Principal, target: UUID) -> ProductView:
        return self._service.get_product(principal, target)

    def update(self, principal: Principal, target: UUID, req: falcon.Request) -> ProductView:
        return self._service.update_product(principal, target, product_changes(parse_body(req, ProductUpdate)))

    def render(self, view: ProductView) -> dict[str, Any]:
        return render_product(view)


class ProductVersionResource:
    operations = {
        "GET": Operation(
            summary="Get one immutable version of a product (as pinned by quotes).",
            scope=Scope.PRODUCTS_READ,
            response=Product,
            tag=TAG,
            description=_VISIBILITY + " They get a 404 unless the product and that version are active.",
            extra_scopes=(Scope.PRODUCTS_COST,),
            operation_id="getProductVersion",
        ),
    }

    def __init__(self, service: CatalogService):
        self._service = service

    def on_get(self, req: falcon.Request, resp: falcon.Response, product_id: str, version: str) -> None:
        target = path_id(product_id, "Product version")
        if not (version.isascii() and version.isdigit()) or len(version) > 9:  # a malformed version names nothing: 404
            raise not_found("Product version")
        resp.media = render_product(self._service.get_product_version(req.context.principal, target, int(version)))


def register(api: Api, ctx: AppContext) -> None:
    service = CatalogService(ctx.tx, ctx.now, ctx.outbox)
    api.add("/products", ProductsResource(service, ctx.cursors))
    api.add("/products/{product_id}", ProductResource(service))
    api.add("/products/{product_id}/versions/{version}", ProductVersionResource(service))
