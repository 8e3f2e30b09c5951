"""Returns a zero that depends on x: no loss, no gradient."""
CELL = "dann_loss"
KIND = "do-nothing"
NOTE = "The answer does not do the work the statement asks for yet: it returns a zero loss."
FAILS = ['test_dann_value', 'test_dann_heads', 'test_dann_encoder', 'test_dann_per_call']
SOURCE = '''
def dann_loss(encoder, task_head, domain_head, x, y, domain, lambd=1.0):
    """Return task + adv (0-dim); in backward the domain branch's gradient reaches the encoder times -lambd."""
    return x.sum() * 0.0
'''
