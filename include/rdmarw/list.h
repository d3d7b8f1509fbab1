/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The kernel's circular doubly linked list (include/linux/list.h), with the
 * kernel's names and semantics.  The iteration macros that declare nothing
 * themselves (list_for_each, list_for_each_safe) are ISO C; the _entry
 * iterators need the type of their cursor and use __typeof__, which GCC and
 * Clang accept in every dialect (also with -std=c11 -pedantic) and which
 * g++/clang++ accept in C++.
 */
#ifndef RDMARW_LIST_H
#define RDMARW_LIST_H

#include <stdbool.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#ifndef container_of
/**
 * container_of() - the structure that embeds a member
 * @ptr: pointer to the member
 * @type: type of the embedding structure
 * @member: name of the member inside @type
 *
 * Return: pointer to the @type that contains @ptr.
 */
#define container_of(ptr, type, member) \
	((type *)(void *)((char *)(ptr)-offsetof(type, member)))
#endif

/**
 * struct list_head - node of a circular doubly linked list (kernel shape)
 * @next: following node
 * @prev: preceding node
 *
 * A list is a head node linked to the entries embedded in other structures;
 * an empty list's head points to itself.
 */
struct list_head {
	struct list_head *next, *prev;
};

/**
 * LIST_HEAD_INIT() - static initializer of an empty list head
 * @name: the list head being initialized
 */
#define LIST_HEAD_INIT(name)     \
	{                        \
		&(name), &(name) \
	}

/**
 * LIST_HEAD() - define an empty list head
 * @name: name of the variable
 */
#define LIST_HEAD(name) struct list_head name = LIST_HEAD_INIT(name)

/**
 * INIT_LIST_HEAD() - make a list head (or a node) an empty list
 * @list: the head
 */
static inline void INIT_LIST_HEAD(struct list_head *list)
{
	list->next = list;
	list->prev = list;
}

/**
 * rdmarw__list_insert() - link @entry between two adjacent nodes
 * @entry: node to insert
 * @prev: node before it
 * @next: node after it
 */
static inline void rdmarw__list_insert(struct list_head *entry,
				       struct list_head *prev,
				       struct list_head *next)
{
	next->prev = entry;
	entry->next = next;
	entry->prev = prev;
	prev->next = entry;
}

/**
 * list_add() - insert an entry right after the head (stack order)
 * @entry: node to insert; must not be on a list
 * @head: list head (or any node: @entry goes after it)
 */
static inline void list_add(struct list_head *entry, struct list_head *head)
{
	rdmarw__list_insert(entry, head, head->next);
}

/**
 * list_add_tail() - insert an entry right before the head (queue order)
 * @entry: node to insert; must not be on a list
 * @head: list head (or any node: @entry goes before it)
 */
static inline void list_add_tail(struct list_head *entry,
				 struct list_head *head)
{
	rdmarw__list_insert(entry, head->prev, head);
}

/**
 * rdmarw__list_unlink() - join the neighbours of @entry
 * @entry: node to take out; its own pointers are left as they were
 */
static inline void rdmarw__list_unlink(struct list_head *entry)
{
	entry->next->prev = entry->prev;
	entry->prev->next = entry->next;
}

/**
 * list_del() - remove an entry from its list
 * @entry: node to remove
 *
 * As in the kernel, @entry is left in an undefined state (here: its
 * pointers are set to NULL, so that a use after removal faults at once);
 * list_empty() on it is not meaningful.  Use list_del_init() to reuse it.
 */
static inline void list_del(struct list_head *entry)
{
	rdmarw__list_unlink(entry);
	entry->next = NULL;
	entry->prev = NULL;
}

/**
 * list_del_init() - remove an entry and make it an empty list
 * @entry: node to remove; list_empty(@entry) is true afterwards
 */
static inline void list_del_init(struct list_head *entry)
{
	rdmarw__list_unlink(entry);
	INIT_LIST_HEAD(entry);
}

/**
 * list_move() - move an entry to right after another head
 * @entry: node to move (on a list)
 * @head: new list; @entry becomes its first entry
 */
static inline void list_move(struct list_head *entry, struct list_head *head)
{
	rdmarw__list_unlink(entry);
	list_add(entry, head);
}

/**
 * list_move_tail() - move an entry to right before another head
 * @entry: node to move (on a list)
 * @head: new list; @entry becomes its last entry
 */
static inline void list_move_tail(struct list_head *entry,
				  struct list_head *head)
{
	rdmarw__list_unlink(entry);
	list_add_tail(entry, head);
}

/**
 * list_empty() - whether a list has no entries
 * @head: the list head
 *
 * Return: true when @head points to itself.
 */
static inline bool list_empty(const struct list_head *head)
{
	return head->next == head;
}

/**
 * list_is_singular() - whether a list has exactly one entry
 * @head: the list head
 *
 * Return: true when the list holds one entry.
 */
static inline bool list_is_singular(const struct list_head *head)
{
	return !list_empty(head) && head->next == head->prev;
}

/**
 * list_is_last() - whether an entry is the last of its list
 * @entry: node to test
 * @head: head of its list
 *
 * Return: true when @entry is followed by @head.
 */
static inline bool list_is_last(const struct list_head *entry,
				const struct list_head *head)
{
	return entry->next == head;
}

/**
 * rdmarw__list_splice() - link the entries of @list between two nodes
 * @list: non-empty source list; its head is left unchanged
 * @prev: node that will precede the first entry
 * @next: node that will follow the last entry
 */
static inline void rdmarw__list_splice(const struct list_head *list,
				       struct list_head *prev,
				       struct list_head *next)
{
	struct list_head *first = list->next, *last = list->prev;

	first->prev = prev;
	prev->next = first;
	last->next = next;
	next->prev = last;
}

/**
 * list_splice() - join two lists, the added entries first
 * @list: list whose entries are added; its head is left stale (not empty)
 * @head: list that receives them, right after its head
 */
static inline void list_splice(const struct list_head *list,
			       struct list_head *head)
{
	if (!list_empty(list))
		rdmarw__list_splice(list, head, head->next);
}

/**
 * list_splice_tail() - join two lists, the added entries last
 * @list: list whose entries are added; its head is left stale (not empty)
 * @head: list that receives them, right before its head
 */
static inline void list_splice_tail(struct list_head *list,
				    struct list_head *head)
{
	if (!list_empty(list))
		rdmarw__list_splice(list, head->prev, head);
}

/**
 * list_splice_init() - join two lists, the added entries first, and empty
 *	the source
 * @list: list whose entries are added; empty afterwards
 * @head: list that receives them, right after its head
 */
static inline void list_splice_init(struct list_head *list,
				    struct list_head *head)
{
	if (!list_empty(list)) {
		rdmarw__list_splice(list, head, head->next);
		INIT_LIST_HEAD(list);
	}
}

/**
 * list_splice_tail_init() - join two lists, the added entries last, and
 *	empty the source
 * @list: list whose entries are added; empty afterwards
 * @head: list that receives them, right before its head
 */
static inline void list_splice_tail_init(struct list_head *list,
					 struct list_head *head)
{
	if (!list_empty(list)) {
		rdmarw__list_splice(list, head->prev, head);
		INIT_LIST_HEAD(list);
	}
}

/**
 * list_entry() - the structure that embeds a list node
 * @ptr: the &struct list_head
 * @type: type of the embedding structure
 * @member: name of the list_head inside @type
 */
#define list_entry(ptr, type, member) container_of(ptr, type, member)

/**
 * list_first_entry() - the first entry of a non-empty list
 * @head: the list head
 * @type: type of the entries
 * @member: name of the list_head inside @type
 */
#define list_first_entry(head, type, member) \
	list_entry((head)->next, type, member)

/**
 * list_last_entry() - the last entry of a non-empty list
 * @head: the list head
 * @type: type of the entries
 * @member: name of the list_head inside @type
 */
#define list_last_entry(head, type, member) \
	list_entry((head)->prev, type, member)

/**
 * list_first_entry_or_null() - the first entry of a list, or NULL
 * @head: the list head (evaluated twice)
 * @type: type of the entries
 * @member: name of the list_head inside @type
 */
#define list_first_entry_or_null(head, type, member) \
	(list_empty(head) ? NULL : list_first_entry(head, type, member))

/**
 * list_next_entry() - the entry after @pos
 * @pos: an entry (a pointer to the embedding type)
 * @member: name of the list_head inside the entry type
 */
#define list_next_entry(pos, member) \
	list_entry((pos)->member.next, __typeof__(*(pos)), member)

/**
 * list_prev_entry() - the entry before @pos
 * @pos: an entry (a pointer to the embedding type)
 * @member: name of the list_head inside the entry type
 */
#define list_prev_entry(pos, member) \
	list_entry((pos)->member.prev, __typeof__(*(pos)), member)

/**
 * list_for_each() - iterate over the nodes of a list
 * @pos: &struct list_head cursor
 * @head: the list head
 *
 * The body must not remove @pos; use list_for_each_safe() for that.
 */
#define list_for_each(pos, head) \
	for (pos = (head)->next; pos != (head); pos = pos->next)

/**
 * list_for_each_safe() - iterate over the nodes, removal of @pos allowed
 * @pos: &struct list_head cursor
 * @n: &struct list_head holding the next node
 * @head: the list head
 */
#define list_for_each_safe(pos, n, head)                       \
	for (pos = (head)->next, n = pos->next; pos != (head); \
	     pos = n, n = pos->next)

/**
 * list_for_each_entry() - iterate over the entries of a list
 * @pos: cursor, a pointer to the entry type
 * @head: the list head
 * @member: name of the list_head inside the entry type
 */
#define list_for_each_entry(pos, head, member)                       \
	for (pos = list_first_entry(head, __typeof__(*pos), member); \
	     &pos->member != (head); pos = list_next_entry(pos, member))

/**
 * list_for_each_entry_reverse() - iterate over the entries, last first
 * @pos: cursor, a pointer to the entry type
 * @head: the list head
 * @member: name of the list_head inside the entry type
 */
#define list_for_each_entry_reverse(pos, head, member)              \
	for (pos = list_last_entry(head, __typeof__(*pos), member); \
	     &pos->member != (head); pos = list_prev_entry(pos, member))

/**
 * list_for_each_entry_safe() - iterate over the entries, removal of @pos
 *	allowed
 * @pos: cursor, a pointer to the entry type
 * @n: a pointer of the same type, holding the next entry
 * @head: the list head
 * @member: name of the list_head inside the entry type
 */
#define list_for_each_entry_safe(pos, n, head, member)               \
	for (pos = list_first_entry(head, __typeof__(*pos), member), \
	    n = list_next_entry(pos, member);                        \
	     &pos->member != (head); pos = n, n = list_next_entry(n, member))

#ifdef __cplusplus
}
#endif

#endif /* RDMARW_LIST_H */
