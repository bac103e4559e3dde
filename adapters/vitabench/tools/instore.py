"""The 16 in-store tools: shops, packages, table bookings and service reservations."""

from __future__ import annotations

from ..database import INSTORE_ID_PREFIX, BookInfo, Order, ReservationInfo, Shop, ShopProduct
from . import templates
from .common import TIME_FORMAT, LookupFailure, Refusal, check_user, parses_as, refuse_unless
from .general import ToolKitBase
from .search import INSTORE_TOP_K, join_keywords, rerank

TIME_FORMAT_HINT = "%Y-%m-%d %H:%M:%S"


class InStoreTools(ToolKitBase):
    """In-store consumption: restaurants, gyms, salons and other shops."""

    # -- lookups (not tools) -----------------------------------------------------------

    def _shop_of_result(self, shop_id: str) -> Shop:
        shop = self.db.shops.get(shop_id)
        if shop is None:
            raise LookupFailure(f"Shop {shop_id} does not exist")
        return shop

    def _order(self, order_id: str) -> Order:
        order = self.db.orders.get(order_id)
        if order is None:
            raise LookupFailure(f"Order {order_id} not found")
        if order.order_type != "instore":
            raise LookupFailure(f"Order {order_id} is not an instore order")
        return order

    def _book(self, book_id: str) -> BookInfo:
        book = self.db.books.get(book_id)
        if book is None:
            raise LookupFailure(f"BookInfo {book_id} not found")
        return book

    def _reservation(self, reservation_id: str) -> ReservationInfo:
        reservation = self.db.reservations.get(reservation_id)
        if reservation is None:
            raise LookupFailure(f"ReservationInfo {reservation_id} not found")
        return reservation

    # -- search ------------------------------------------------------------------------

    def instore_shop_search_recommend(self, keywords: list[str]) -> str:
        documents = {
            shop.shop_id: shop.shop_name + "," + ",".join(shop.tags)
            for shop in self.db.shops.values()
        }
        ranked = rerank(join_keywords(keywords), documents)[:INSTORE_TOP_K]
        # Looked up by the printed id: a key/id mismatch breaks the search (data quirk).
        return "\n".join(templates.shop_short_text(self._shop_of_result(sid)) for sid in ranked)

    def instore_product_search_recommend(self, keywords: list[str]) -> str:
        documents = {
            pid: p.name + "," + ",".join(p.tags)
            for pid, p in self.db.products.items()
            if isinstance(p, ShopProduct)
        }
        ranked = rerank(join_keywords(keywords), documents)[:INSTORE_TOP_K]
        return "\n".join(templates.shop_product_text(self.db.products[pid]) for pid in ranked)  # type: ignore[arg-type]

    # -- package orders ----------------------------------------------------------------

    def create_instore_product_order(
        self, user_id: str, shop_id: str, product_id: str, quantity: int = 1
    ) -> str:
        db = self.db
        check_user(db, user_id)
        shop = db.shops.get(shop_id)
        if shop is None:
            raise Refusal("Shop does not exist")
        refuse_unless(
            any(p.product_id == product_id for p in shop.products), "Product does not exist"
        )
        refuse_unless(quantity > 0, "Quantity must be greater than 0")
        product = db.products[product_id]
        if not isinstance(product, ShopProduct):
            raise LookupFailure(f"Product {product_id} is not an instore scenario product")
        # The benchmark stores the catalogue object itself in the order and writes the
        # ordered quantity into it: later orders of the same product change what
        # earlier orders print (their totals stay).
        product.quantity = quantity
        order = Order(
            order_id=db.new_id(INSTORE_ID_PREFIX),
            order_type="instore",
            user_id=user_id,
            store_id=shop_id,
            total_price=quantity * product.price,
            status="unpaid",
            products=[product],
            create_time=db.time,
            update_time=db.time,
        )
        db.orders[order.order_id] = order
        db.created.append(order)
        return templates.order_long_text(order)

    def pay_instore_order(self, order_id: str) -> str:
        refuse_unless(order_id, "Order ID cannot be empty")
        return self._pay(self._order(order_id), f"Order {order_id}")

    def instore_cancel_order(self, order_id: str) -> str:
        refuse_unless(order_id, "Order ID cannot be empty")
        return self._cancel(self._order(order_id), f"Order {order_id}")

    # The three in-store records (orders, table bookings, reservations) are paid
    # and cancelled alike; ``label`` is how the messages name the record.
    def _pay(self, record: Order | BookInfo, label: str) -> str:
        refuse_unless(record.status == "unpaid", f"{label} is not in `unpaid` status.")
        record.status = "paid"
        record.update_time = self.db.time
        return "Payment successful"

    def _cancel(self, record: Order | BookInfo | ReservationInfo, label: str) -> str:
        refuse_unless(record.status != "cancelled", f"{label} is already cancelled.")
        record.status = "cancelled"
        record.update_time = self.db.time
        return f"{label} is cancelled."

    # -- table bookings ----------------------------------------------------------------

    def instore_book(self, user_id: str, shop_id: str, time: str, customer_count: int = 1) -> str:
        db = self.db
        check_user(db, user_id)
        shop = db.shops.get(shop_id)
        if shop is None:
            raise Refusal("Shop does not exist")
        refuse_unless(
            customer_count > 0, "Number of customers for table booking must be greater than 0"
        )
        refuse_unless(time, "Table booking time cannot be empty")
        refuse_unless(
            parses_as(time, TIME_FORMAT),
            f"Table booking time format is incorrect, correct format is {TIME_FORMAT_HINT}",
        )
        refuse_unless(shop.enable_book, "Shop does not support table booking")
        book = BookInfo(
            book_id=db.new_id(INSTORE_ID_PREFIX),
            shop_id=shop_id,
            book_time=time,
            update_time=db.time,
            customer_id=user_id,
            customer_count=customer_count,
            book_price=shop.book_price,
            status="unpaid" if shop.book_price > 0 else "paid",
        )
        db.books[book.book_id] = book
        db.created.append(book)
        return templates.book_text(book)

    def pay_instore_book(self, book_id: str) -> str:
        refuse_unless(book_id, "Booking ID cannot be empty")
        return self._pay(self._book(book_id), f"BookInfo {book_id}")

    def instore_cancel_book(self, book_id: str) -> str:
        refuse_unless(book_id, "Booking ID cannot be empty")
        return self._cancel(self._book(book_id), f"BookInfo {book_id}")

    # -- service reservations ----------------------------------------------------------

    def instore_reservation(
        self, user_id: str, shop_id: str, time: str, customer_count: int = 1
    ) -> str:
        db = self.db
        check_user(db, user_id)
        refuse_unless(db.shops.get(shop_id) is not None, "Shop does not exist")
        refuse_unless(
            parses_as(time, TIME_FORMAT),
            f"Reservation time format is incorrect, correct format is {TIME_FORMAT_HINT}",
        )
        refuse_unless(
            customer_count > 0, "Number of customers for reservation must be greater than 0"
        )
        reservation = ReservationInfo(
            reservation_id=db.new_id(INSTORE_ID_PREFIX),
            shop_id=shop_id,
            reservation_time=time,
            update_time=db.time,
            customer_id=user_id,
            customer_count=customer_count,
            status="unconsumed",
        )
        db.reservations[reservation.reservation_id] = reservation
        db.created.append(reservation)
        return templates.reservation_text(reservation)

    def instore_modify_reservation(
        self, reservation_id: str, time: str, customer_count: int = 0
    ) -> str:
        refuse_unless(reservation_id, "Reservation ID cannot be empty")
        reservation = self._reservation(reservation_id)
        refuse_unless(
            reservation.status not in ("consumed", "cancelled"),
            f"ReservationInfo {reservation_id} is already {reservation.status}.",
        )
        refuse_unless(
            customer_count >= 0,
            "Number of customers for reservation must be greater than or equal to 0",
        )
        refuse_unless(time, "Reservation time cannot be empty")
        refuse_unless(
            parses_as(time, TIME_FORMAT),
            f"Reservation time format is incorrect, correct format is {TIME_FORMAT_HINT}",
        )
        reservation.reservation_time = time
        reservation.customer_count = customer_count
        reservation.update_time = self.db.time
        return templates.reservation_text(reservation)

    def instore_cancel_reservation(self, reservation_id: str) -> str:
        refuse_unless(reservation_id, "Reservation ID cannot be empty")
        reservation = self._reservation(reservation_id)
        return self._cancel(reservation, f"ReservationInfo {reservation_id}")

    # -- the user's records ------------------------------------------------------------

    def get_instore_orders(self, user_id: str) -> str:
        check_user(self.db, user_id)
        orders = [
            o for o in self.db.orders.values() if o.order_type == "instore" and o.user_id == user_id
        ]
        if not orders:
            return f"User {user_id} has no order information."
        return "\n".join(templates.order_long_text(o) for o in orders)

    def get_instore_reservations(self, user_id: str) -> str:
        check_user(self.db, user_id)
        reservations = [r for r in self.db.reservations.values() if r.customer_id == user_id]
        if not reservations:
            return f"User {user_id} has no reservation information."
        return "\n".join(templates.reservation_text(r) for r in reservations)

    def get_instore_books(self, user_id: str) -> str:
        check_user(self.db, user_id)
        books = [b for b in self.db.books.values() if b.customer_id == user_id]
        if not books:
            return f"User {user_id} has no book information."
        return "\n".join(templates.book_text(b) for b in books)

    def search_instore_book(self, user_id: str, book_id: str | None = None) -> str:
        if not book_id:
            return self.get_instore_books(user_id)
        check_user(self.db, user_id)
        book = self._book(book_id)
        refuse_unless(
            book.customer_id == user_id, f"BookInfo {book_id} is not belong to user {user_id}."
        )
        return templates.book_text(book)

    def search_instore_reservation(self, user_id: str, reservation_id: str | None = None) -> str:
        if not reservation_id:
            return self.get_instore_reservations(user_id)
        check_user(self.db, user_id)
        reservation = self._reservation(reservation_id)
        refuse_unless(
            reservation.customer_id == user_id,
            f"ReservationInfo {reservation_id} is not belong to user {user_id}.",
        )
        return templates.reservation_text(reservation)
